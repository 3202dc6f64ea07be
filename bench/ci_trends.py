"""The CI runs page with its trends across runs, at the size the page is meant for: 50
candidates x 2,000 actions and thousands of runs. Median server time, SQL queries, page size.

Two shapes of history, written straight into the tables (an API post at a time would take
hours): runs that post the same 100 actions of their candidate, and runs that post their
candidate's whole suite (2,000 results a run). Some cells flip every run, some regress now and
then. The ingest keeps each post's tally as it stores it; the history here bypasses it, so the
trends' first read ("cold") counts what one visit may, then the tallies are kept as the ingest
would. Target: 150 ms or less with the tallies kept, and the same number of queries in every
shape. Run with `.venv/bin/python bench/ci_trends.py` (PostgreSQL from DATABASE_URL, a
throwaway database; Redis from REDIS_URL).
"""

from _setup import bulk_actions, django_on_throwaway_database, median_ms, timed

CANDIDATES = 50
ACTIONS = 2000
# (label, runs, actions each run posts for its candidate: the same ones every run)
SHAPES = [("3,000 runs x 100 actions", 3000, 100), ("1,500 runs x 2,000 actions", 1500, 2000)]
REPEAT = 9

# The outcome of action a for candidate c in the candidate's k-th run, as SQL: one action in
# fifty flips every run, a few cells regress for a run now and then, the rest keep one outcome
# (% doubled: the statement carries parameters).
OUTCOME = """CASE
  WHEN {a} %% 50 = 7 THEN CASE WHEN {k} %% 2 = 0 THEN 'passed' ELSE 'failed' END
  WHEN ({a} * 31 + {c} * 17 + {k}) %% 211 = 0 THEN 'failed'
  WHEN {a} %% 10 = 0 THEN 'failed'
  WHEN {a} %% 10 = 1 THEN 'needs_integration'
  WHEN {a} %% 10 = 2 THEN 'not_covered'
  ELSE 'passed' END"""


def build(index: int, runs: int, per_run: int):  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model
    from django.db import connection

    from evaluations.models import Candidate, Membership, Project, Solution

    user, _ = get_user_model().objects.get_or_create(username="bench")
    project = Project.objects.create(name=f"Bench {index}", slug=f"bench-{index}")
    Membership.objects.create(project=project, user=user, role="platform", is_admin=True)
    solutions = list(Solution.objects.all())
    Candidate.objects.bulk_create(
        Candidate(
            project=project,
            solution=solutions[i % len(solutions)],
            slug=f"c{i}",
            tier="validate_first",
            reason="bench",
            position=i,
        )
        for i in range(CANDIDATES)
    )
    bulk_actions(project, ACTIONS, feature="Requirement {}", question="Does action {} hold?")
    params = {"p": project.pk, "runs": runs, "n": CANDIDATES, "per": per_run, "all": ACTIONS}
    with connection.cursor() as cursor:
        # Runs in turn per candidate: run i is the (i // n)-th run of candidate i % n.
        cursor.execute(
            """
            CREATE TEMP TABLE bench_c AS SELECT id, position AS c FROM evaluations_candidate
              WHERE project_id = %(p)s;
            CREATE TEMP TABLE bench_a AS SELECT id, position AS a FROM evaluations_acceptanceaction
              WHERE project_id = %(p)s;
            INSERT INTO poc_run (project_id, external_id, name, url, commit, candidate_id,
                                 created_at, updated_at)
            SELECT %(p)s, 'run-' || i, 'Nightly ' || i, '', '', bench_c.id,
                   now() - (%(runs)s - i) * interval '10 minutes',
                   now() - (%(runs)s - i) * interval '10 minutes'
            FROM generate_series(0, %(runs)s - 1) i JOIN bench_c ON bench_c.c = i %% %(n)s;
            INSERT INTO poc_runimport (run_id, kind, result_count, new, unchanged, changed,
                                       regressed, recovered, unmapped, posted_at)
            SELECT id, 'json', %(per)s, 0, %(per)s, 0, 0, 0, '[]', created_at FROM poc_run
              WHERE project_id = %(p)s;
            """,
            params,
        )
        now = OUTCOME.format(a="a.a", c="c.c", k="k")
        before = OUTCOME.format(a="a.a", c="c.c", k="k - 1")
        cursor.execute(
            f"""
            INSERT INTO poc_result (project_id, candidate_id, action_id, outcome, failure_cause,
              integration_what, integration_owner_team, integration_effort_days,
              integration_delivery, integration_delivered_by, note, change_reason, source,
              run_id, run_reference, run_import_id, change, recorded_at)
            SELECT %(p)s, c.id, a.id, o.now, CASE WHEN o.now = 'failed' THEN 'x' ELSE '' END,
              CASE WHEN o.now = 'needs_integration' THEN 'x' ELSE '' END,
              CASE WHEN o.now = 'needs_integration' THEN 'platform' ELSE '' END,
              CASE WHEN o.now = 'needs_integration' THEN 2 END, '', '', '', '', 'ci',
              r.id, r.external_id, ri.id,
              CASE WHEN k = 0 THEN 'new' WHEN o.now = o.before THEN 'unchanged'
                   WHEN o.before = 'passed' AND o.now = 'failed' THEN 'regressed'
                   WHEN o.before = 'failed' AND o.now = 'passed' THEN 'recovered'
                   ELSE 'changed' END,
              ri.posted_at
            FROM poc_run r
            JOIN poc_runimport ri ON ri.run_id = r.id
            JOIN bench_c c ON c.id = r.candidate_id
            CROSS JOIN LATERAL (SELECT substr(r.external_id, 5)::int / %(n)s AS k) kk
            JOIN bench_a a ON (a.a - c.c * 40 + %(all)s) %% %(all)s < %(per)s
            CROSS JOIN LATERAL (SELECT {now} AS now, {before} AS before) o
            WHERE r.project_id = %(p)s
            ORDER BY ri.id, a.a;
            DROP TABLE bench_c; DROP TABLE bench_a;
            ANALYZE poc_result; ANALYZE poc_runimport; ANALYZE poc_run;
            -- The previous result of each cell a run moved (the page reads it for those only).
            UPDATE poc_result r SET previous_id = (
              SELECT max(p.id) FROM poc_result p WHERE p.candidate_id = r.candidate_id
                AND p.action_id = r.action_id AND p.id < r.id)
            WHERE r.project_id = %(p)s AND r.change IN ('regressed', 'recovered', 'changed');
            """,
            params,
        )
        # Results are append-only: autovacuum keeps the table as tidy as this in service.
        cursor.execute("VACUUM ANALYZE poc_result")
        cursor.execute("SELECT count(*) FROM poc_result WHERE project_id = %s", [project.pk])
        (count,) = cursor.fetchone()
    return project, user, count


def keep_tallies(project) -> None:  # type: ignore[no-untyped-def]
    """What the ingest does as each post is stored: keep its tally (here counted afterwards,
    the history having been written straight into the tables)."""
    from poc import run_tallies
    from poc.models import RunImport

    posts = [
        run_tallies.Post(pk, run_id, "", posted_at, count)
        for pk, run_id, posted_at, count in RunImport.objects.filter(run__project=project)
        .order_by("-posted_at")
        .values_list("pk", "run_id", "posted_at", "result_count")[: run_tallies.WINDOW_POSTS]
    ]
    for start in range(0, len(posts), 100):
        chunk = posts[start : start + 100]
        for post_pk, tally in run_tallies._count(chunk).items():
            post = next(p for p in chunk if p.pk == post_pk)
            run_tallies.remember(post.pk, post.posted_at, tally)


def main() -> None:
    teardown = django_on_throwaway_database()
    try:
        from django.core.management import call_command
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        from poc import selectors

        call_command("seed_catalog", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
        print(
            f"{'history':<28}{'results':>10}{'cold ms':>9}{'page ms':>9}{'trends ms':>10}"
            f"{'queries':>9}{'KiB':>6}"
        )
        counts, worst = set(), 0.0
        for index, (label, runs, per_run) in enumerate(SHAPES):
            project, user, results = build(index, runs, per_run)
            client = Client(SERVER_NAME="localhost")
            client.force_login(user)
            url = f"/projects/{project.slug}/ci/runs/"
            cold = median_ms(timed(lambda p=project: selectors.ci_trends(p), 1))
            keep_tallies(project)
            assert client.get(url).status_code == 200  # warm caches and templates
            with CaptureQueriesContext(connection) as ctx:
                size = len(client.get(url).content) // 1024
            counts.add(len(ctx.captured_queries))
            page = median_ms(timed(lambda url=url, client=client: client.get(url), REPEAT))
            alone = median_ms(timed(lambda p=project: selectors.ci_trends(p), REPEAT))
            trends = selectors.ci_trends(project)
            worst = max(worst, page)
            print(
                f"{label:<28}{results:>10}{cold:>9.1f}{page:>9.1f}{alone:>10.1f}"
                f"{len(ctx):>9}{size:>6}"
            )
            print(
                f"  {len(trends.trends)} candidates, {len(trends.trends[0].runs)} runs each, "
                f"flaky listed {len(trends.flaky)} (+{trends.flaky_more}), regressions "
                f"{len(trends.regressions)}, recoveries {len(trends.recoveries)}"
            )
        print()
        print(
            f"slowest page: {worst:.1f} ms (target <= 150 ms): {'OK' if worst <= 150 else 'OVER'}"
        )
        print(f"queries in every shape: {sorted(counts)}", "(constant)" if len(counts) == 1 else "")
    finally:
        teardown()


if __name__ == "__main__":
    main()
