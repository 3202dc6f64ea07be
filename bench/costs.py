"""The cost page and the cost model at the scale procurement asks for: 50 candidates x 10 years
x 30 cost lines (plus the PoC's integration effort, read from the results).

Targets: the page and the model in 150 ms or less of server time; the ranking probability
(1,000 samples) in 1 s or less. Measured here: the server's
time for the whole cost page (median of REPEAT, Django's test client) with its query count, and
the arithmetic alone (reports.procurement.selectors.cost_overview, median of REPEAT). Run with
`make bench` or `.venv/bin/python bench/costs.py` (PostgreSQL from DATABASE_URL; a throwaway
database).
"""

import os
import random
import time

os.environ["WORKBENCH_QUERY_STATS"] = "true"

from _setup import django_on_throwaway_database, median_ms, timed

CANDIDATES, YEARS, LINES = 50, 10, 30
REPEAT = 7


def build():  # type: ignore[no-untyped-def]
    from decimal import Decimal

    from django.contrib.auth import get_user_model

    from evaluations.models import Candidate, Membership, Project, Solution
    from reports.procurement.models import CostLine
    from reports.procurement.services import ModelData, cost_model_save

    user, _ = get_user_model().objects.get_or_create(username="bench")
    project = Project.objects.create(name="Costs", slug="costs")
    Membership.objects.create(project=project, user=user, role="procurement", is_admin=True)
    solutions = list(Solution.objects.all())
    candidates = Candidate.objects.bulk_create(
        Candidate(
            project=project,
            solution=solutions[i % len(solutions)],
            slug=f"c{i}",
            tier="validate_first",
            reason="scale",
            position=i,
        )
        for i in range(CANDIDATES)
    )
    cost_model_save(
        project=project,
        data=ModelData(
            currency="USD", horizon_years=YEARS, discount_rate_percent=5, gpus=512, nodes=64,
            cores_per_node=96, sockets_per_node=2, named_users=300, gpu_hours_per_year=2_000_000,
            growth_percent=12, fte_cost=150000, day_rates={"platform": 800, "ops": 700},
            exchange_rates={"EUR": {"rate": "1.08", "date": "2026-12-01", "source": "bench"}},
            capacity="owned", gpu_price=32000, depreciation_years=4, baseline_label="today",
            baseline_utilisation_percent=35,
        ),
        actor=None,
    )  # fmt: skip
    from django.utils import timezone

    from reports.procurement.models import TermEntry

    TermEntry.objects.bulk_create(
        TermEntry(
            project=project, candidate=c, key="utilisation_percent", value=str(40 + i % 50),
            basis="estimate", recorded_at=timezone.now(),
        )
        for i, c in enumerate(candidates)
    )  # fmt: skip
    shapes = [
        ("licence", "per_unit", "per_gpu", "USD"),
        ("support", "per_year", "", "EUR"),
        ("training", "one_off", "", "USD"),
        ("operations", "fte", "", ""),
        ("implementation", "days", "", ""),
        ("licence", "per_unit", "per_core_pair", "USD"),
    ]
    rng = random.Random(7)
    lines = []
    for candidate in candidates:
        for n in range(LINES):
            category, kind, unit, currency = shapes[n % len(shapes)]
            expected = Decimal(rng.randint(1, 5000)) * (
                Decimal(1) if kind in ("fte", "days") else 10
            )
            lines.append(
                CostLine(
                    project=project,
                    candidate=candidate,
                    category=category,
                    kind=kind,
                    label=f"line {n}",
                    unit=unit,
                    team="ops" if kind == "days" else "",
                    currency=currency,
                    low=expected * Decimal("0.8"),
                    expected=expected,
                    high=expected * Decimal("1.3"),
                    first_year=1 + n % 3,
                )  # fmt: skip
            )
    lines += [
        CostLine(
            project=project, candidate=None, category="operations", kind="fte", label="today",
            low=Decimal(2), expected=Decimal(3), high=Decimal(4),
        )
    ]  # fmt: skip
    CostLine.objects.bulk_create(lines)
    return project, user, candidates


def main() -> None:
    teardown = django_on_throwaway_database()
    try:
        from django.core.management import call_command
        from django.test import Client

        from reports.procurement.selectors import cost_overview

        call_command("seed_catalog", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
        started = time.perf_counter()
        project, user, candidates = build()
        print(
            f"built {CANDIDATES} candidates x {YEARS} years x {LINES} lines "
            f"in {time.perf_counter() - started:.1f} s"
        )
        client = Client(SERVER_NAME="localhost")
        client.force_login(user)
        url = f"/projects/{project.slug}/costs/?all=1"
        response = client.get(url)
        assert response.status_code == 200, response.status_code
        assert response.content.count(b"c49") >= 1
        page_ms = median_ms(timed(lambda: client.get(url), REPEAT))
        opened = f"{url}&candidate=c7"
        assert b'id="c-c7"' in client.get(opened).content
        opened_ms = median_ms(timed(lambda: client.get(opened), REPEAT))
        model_ms = median_ms(timed(lambda: cost_overview(project, candidates), REPEAT))
        if os.environ.get("BENCH_PROFILE"):
            import cProfile
            import pstats

            profile = cProfile.Profile()
            profile.runcall(lambda: cost_overview(project, candidates))
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        from reports.procurement.analysis import cheapest_shares

        every = [c.costs for c in cost_overview(project, candidates).candidates]
        shares_ms = median_ms(timed(lambda: cheapest_shares(every), REPEAT))
        cheapest = f"/projects/{project.slug}/costs/cheapest/?all=1"
        assert client.get(cheapest).status_code == 200
        cheapest_ms = median_ms(timed(lambda: client.get(cheapest), REPEAT))
        print(f"{'measure':<34}{'ms':>8}{'KB':>8}{'queries':>9}{'ms/150':>8}")
        print(
            f"{'cost page (server)':<34}{page_ms:>8.1f}{len(response.content) / 1024:>8.0f}"
            f"{int(response['X-Query-Count']):>9}{page_ms / 150:>8.2f}"
        )
        blank = ""
        for label, ms in (
            ("cost page, one candidate opened", opened_ms),
            ("cost model, 50 candidates", model_ms),
        ):
            print(f"{label:<34}{ms:>8.1f}{blank:>8}{blank:>9}{ms / 150:>8.2f}")
        print(f"{'measure':<34}{'ms':>8}{'':>8}{'':>9}{'ms/1000':>8}")
        for label, ms in (
            ("cheapest shares, 1,000 samples", shares_ms),
            ("the fragment that shows them", cheapest_ms),
        ):
            print(f"{label:<34}{ms:>8.1f}{blank:>8}{blank:>9}{ms / 1000:>8.2f}")
    finally:
        teardown()


if __name__ == "__main__":
    main()
