"""The review pages at real scale: 50 candidates x 2,000 actions x 5 results per cell.

Targets: the matrix, the comparison (cards and side by side) and the acceptance suite each
usable within 1 s in a real browser, with 150 ms or less on the server and 1 MB or less of
page. Measured here: the server's time (median of REPEAT, Django's test client), the page's
weight, and Chromium's time to the load event (median of BROWSER_REPEAT, Playwright, against
a live server in this process). Run with `make bench` or `.venv/bin/python bench/pages.py`
(PostgreSQL from DATABASE_URL; a throwaway database). The 500,000 results are written with
SQL (generate_series), as bulk inserts from Python would take minutes.
"""

import os
import threading
import time

# The server's own count of SQL queries per request (X-Query-Count).
os.environ["WORKBENCH_QUERY_STATS"] = "true"

from _setup import django_on_throwaway_database, median_ms, timed

CANDIDATES, ACTIONS, PER_CELL = 50, 2000, 5
REPEAT, BROWSER_REPEAT = 7, 5
PAGES = [
    ("matrix", "matrix/"),
    ("matrix, failed only", "matrix/?outcome=failed"),
    ("matrix, page 12", "matrix/?page=12"),
    ("comparison", "comparison/"),
    ("side by side", "comparison/?columns=1"),
    ("acceptance suite", "requirements/"),
]


def build():  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model
    from django.db import connection

    from evaluations.models import Candidate, Membership, Project, Requirement, Solution

    user, _ = get_user_model().objects.get_or_create(username="bench", is_staff=False)
    project = Project.objects.create(name="Scale", slug="scale")
    Membership.objects.create(project=project, user=user, role="platform", is_admin=True)
    solutions = list(Solution.objects.all())
    Candidate.objects.bulk_create(
        Candidate(
            project=project,
            solution=solutions[i % len(solutions)],
            slug=f"c{i}",
            tier="validate_first" if i % 2 else "alternative",
            reason="scale",
            position=i,
        )
        for i in range(CANDIDATES)
    )
    dimensions = ("workload_fit", "scheduling", "tenancy", "operations", "integration")
    Requirement.objects.bulk_create(
        Requirement(
            project=project,
            feature=f"Requirement {r}: the platform keeps its promise under load",
            dimension=dimensions[r % len(dimensions)],
            owner_team="platform",
            position=r,
        )
        for r in range(ACTIONS // 10)
    )
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO evaluations_acceptanceaction
                (project_id, requirement_id, key, question, steps, expected_evidence,
                 pass_criterion, scenario, position, template_key, translations, created_at,
                 updated_at)
            SELECT %s, r.id, 'action-' || (r.position * 10 + n),
                   'Does action ' || (r.position * 10 + n) || ' hold when the cluster is full?',
                   '', '', 'Jobs queue and run as promised', 'real_task', n, '', '{}', now(),
                   now()
            FROM evaluations_requirement r, generate_series(0, 9) n
            WHERE r.project_id = %s
            """,
            [project.pk, project.pk],
        )
        cursor.execute(
            """
            INSERT INTO poc_result
                (project_id, candidate_id, action_id, outcome, failure_cause, integration_what,
                 integration_owner_team, integration_effort_days, note, change_reason, source,
                 run_reference, recorded_at, change)
            SELECT a.project_id, c.id, a.id, o.outcome,
                   CASE WHEN o.outcome = 'failed' THEN 'NCCL timeout at step ' || k ELSE '' END,
                   CASE WHEN o.outcome = 'needs_integration' THEN 'LDAP groups' ELSE '' END,
                   CASE WHEN o.outcome = 'needs_integration' THEN 'platform' ELSE '' END,
                   CASE WHEN o.outcome = 'needs_integration' THEN 2.5 END,
                   '', '', 'ci', '', now() - (%s - k) * interval '1 hour', ''
            FROM evaluations_acceptanceaction a
            JOIN evaluations_candidate c ON c.project_id = a.project_id
            CROSS JOIN generate_series(1, %s) k
            CROSS JOIN LATERAL (
                SELECT (ARRAY['passed', 'failed', 'not_covered', 'needs_integration'])
                       [1 + (a.id * 7 + c.id * 13 + k) %% 4] AS outcome
            ) o
            WHERE a.project_id = %s
            """,
            [PER_CELL, PER_CELL, project.pk],
        )
        cursor.execute(
            """
            INSERT INTO poc_resultcell
                (project_id, candidate_id, action_id, result_id, outcome, result_count,
                 evidence_count)
            SELECT DISTINCT ON (candidate_id, action_id)
                   project_id, candidate_id, action_id, id, outcome, %s, 0
            FROM poc_result WHERE project_id = %s
            ORDER BY candidate_id, action_id, recorded_at DESC, id DESC
            """,
            [PER_CELL, project.pk],
        )
        cursor.execute("ANALYZE")
    return project, user


def serve() -> str:
    """A live server in a thread, static files included (as `manage.py runserver` serves)."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadedWSGIServer(("127.0.0.1", 0), Quiet)
    server.set_app(StaticFilesHandler(get_wsgi_application()))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def browser_times(base: str, session: str, urls: list[tuple[str, str]]) -> dict[str, float]:
    import os
    import shutil

    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
    if chromium is None:
        raise SystemExit("the browser figures need Chromium: apt-get install chromium")
    times: dict[str, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        context = browser.new_context()
        context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
        page = context.new_page()
        for label, url in urls:
            page.goto(base + url, wait_until="load")  # warm: templates, static files
            samples = []
            for _ in range(BROWSER_REPEAT):
                start = time.perf_counter()
                page.goto(base + url, wait_until="load")
                samples.append(time.perf_counter() - start)
            times[label] = median_ms(samples)
        browser.close()
    return times


def main() -> None:
    teardown = django_on_throwaway_database()
    try:
        from django.core.management import call_command
        from django.test import Client

        call_command("seed_catalog", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
        started = time.perf_counter()
        project, user = build()
        print(
            f"built {CANDIDATES} candidates x {ACTIONS} actions x {PER_CELL} results "
            f"in {time.perf_counter() - started:.1f} s"
        )
        client = Client(SERVER_NAME="localhost")
        client.force_login(user)
        urls = [(label, f"/projects/{project.slug}/{path}") for label, path in PAGES]
        rows = []
        for label, url in urls:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            ms = median_ms(timed(lambda url=url: client.get(url), REPEAT))
            rows.append((label, ms, len(response.content), int(response["X-Query-Count"])))
        base = serve()
        browser = browser_times(base, client.cookies["sessionid"].value, urls)
        print(
            f"{'page':<22}{'server ms':>10}{'KB':>8}{'queries':>9}{'Chromium ms':>13}"
            f"{'server/150':>11}{'KB/1024':>9}{'browser/1000':>13}"
        )
        for label, ms, size, queries in rows:
            print(
                f"{label:<22}{ms:>10.1f}{size / 1024:>8.0f}{queries:>9}{browser[label]:>13.0f}"
                f"{ms / 150:>11.2f}{size / 1024 / 1024:>9.2f}{browser[label] / 1000:>13.2f}"
            )
    finally:
        teardown()


if __name__ == "__main__":
    main()
