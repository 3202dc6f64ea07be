"""Matrix and comparison pages at three project sizes: median server time and SQL queries.

Target: the largest matrix (10 candidates x 300 actions x 5 results per cell) in 150 ms or
less, and the same number of queries at every size. Run with `make bench` or
`.venv/bin/python bench/matrix.py` (PostgreSQL from DATABASE_URL, a throwaway database).
"""

import random

from _setup import bulk_actions, django_on_throwaway_database, median_ms, timed

SIZES = [(3, 50, 1), (6, 150, 3), (10, 300, 5)]  # candidates, actions, results per cell
REPEAT = 15


def build(index: int, candidates: int, actions: int, per_cell: int):  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model

    from evaluations.models import Candidate, Membership, Project, Solution
    from poc.models import (
        Outcome,
        Result,
        ResultCell,
    )

    user, _ = get_user_model().objects.get_or_create(username="bench")
    project = Project.objects.create(name=f"Bench {index}", slug=f"bench-{index}")
    Membership.objects.create(project=project, user=user, role="platform", is_admin=True)
    solutions = list(Solution.objects.all())
    cands = Candidate.objects.bulk_create(
        Candidate(
            project=project,
            solution=solutions[i % len(solutions)],
            slug=f"c{i}",
            tier="validate_first",
            reason="bench",
            position=i,
        )
        for i in range(candidates)
    )
    acts = bulk_actions(
        project,
        actions,
        feature="Requirement {}",
        question="Does action {} hold under load?",
        dimensions=("workload_fit", "scheduling", "tenancy", "operations", "integration"),
    )
    rng = random.Random(index)
    outcomes = Outcome.values
    results = []
    for c in cands:
        for a in acts:
            for _ in range(per_cell):
                outcome = rng.choice(outcomes)
                results.append(
                    Result(
                        project=project,
                        candidate=c,
                        action=a,
                        outcome=outcome,
                        failure_cause="cause" if outcome == "failed" else "",
                        integration_what="x" if outcome == "needs_integration" else "",
                        integration_owner_team="ops" if outcome == "needs_integration" else "",
                        integration_effort_days=2 if outcome == "needs_integration" else None,
                    )
                )
    Result.objects.bulk_create(results, batch_size=5000)
    latest = {}
    for r in results:  # bulk_create keeps insertion order; the last per cell is the latest
        latest[(r.candidate_id, r.action_id)] = r
    ResultCell.objects.bulk_create(
        (
            ResultCell(
                project=project,
                candidate_id=c,
                action_id=a,
                result=r,
                outcome=r.outcome,
                result_count=per_cell,
            )
            for (c, a), r in latest.items()
        ),
        batch_size=5000,
    )
    return project, user


def main() -> None:
    teardown = django_on_throwaway_database()
    try:
        from django.core.management import call_command
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        call_command("seed_catalog", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
        print(f"{'size (cand x actions x results)':<34}{'page':<12}{'median ms':>10}{'queries':>9}")
        largest = {}
        query_counts: dict[str, set[int]] = {"matrix": set(), "comparison": set()}
        for index, (candidates, actions, per_cell) in enumerate(SIZES):
            project, user = build(index, candidates, actions, per_cell)
            client = Client(SERVER_NAME="localhost")
            client.force_login(user)
            for page in ("matrix", "comparison"):
                url = f"/projects/{project.slug}/{page}/"
                assert client.get(url).status_code == 200  # warm caches and templates
                with CaptureQueriesContext(connection) as ctx:
                    client.get(url)
                queries = len(ctx.captured_queries)
                query_counts[page].add(queries)
                ms = median_ms(timed(lambda url=url, client=client: client.get(url), REPEAT))
                label = f"{candidates} x {actions} x {per_cell}"
                print(f"{label:<34}{page:<12}{ms:>10.1f}{queries:>9}")
                largest[page] = ms
        print()
        print(
            f"largest matrix: {largest['matrix']:.1f} ms (target <= 150 ms): "
            f"{'OK' if largest['matrix'] <= 150 else 'OVER'}"
        )
        for page, counts in query_counts.items():
            state = "constant" if len(counts) == 1 else "GROWS"
            print(f"{page} queries at every size: {sorted(counts)} ({state})")
    finally:
        teardown()


if __name__ == "__main__":
    main()
