"""The sheets list of a project with 50 revisions: how long a visit takes, and its queries.

Target: under 100 ms with constant queries at 50 revisions (a page of 20). The project is the
sheet benchmark's 5 candidates x 200 actions with ten CI runs of history, each result with an
evidence link. Revisions: one generated for real, the others copies of it (what months of
nightly sheets leave), a fifth of them for a smaller candidate set. Timed through Django's
test client (middleware, session, template): the first visit after a change rebuilds the
current fingerprint once per candidate set; later visits read it from the cache until the
project changes. Run with `.venv/bin/python bench/sheets_list.py` (PostgreSQL from
DATABASE_URL, a throwaway database; the cache from REDIS_URL).
"""

import statistics
import time
import uuid

from _setup import django_on_throwaway_database
from sheets import ACTIONS, CANDIDATES, build

REVISIONS, VISITS = 50, 30


def main() -> None:
    teardown = django_on_throwaway_database()
    try:
        from django.conf import settings
        from django.core.management import call_command
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        from evaluations.services import membership_set
        from poc import services as poc_services
        from poc.models import (
            Result,
        )
        from reports import services
        from reports.models import Sheet, SheetStatus

        settings.ALLOWED_HOSTS = ["*"]
        settings.CACHES["default"]["KEY_PREFIX"] = f"bench-{uuid.uuid4().hex[:8]}"
        call_command("seed_catalog", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
        project, user = build(history=10)
        membership_set(project=project, user=user, role="platform", is_admin=True, actor=None)
        first = services.sheet_generate(
            acknowledgement="known gaps", project=project, language="en", actor=None
        )
        slugs = list(project.candidates.order_by("position").values_list("slug", flat=True))
        subset = services.sheet_generate(
            acknowledgement="known gaps",
            project=project,
            language="en",
            actor=None,
            candidate_slugs=slugs[:2],
        )
        Sheet.objects.bulk_create(
            Sheet(
                project=project,
                revision=n,
                language="en",
                candidate_slugs=(subset if n % 5 == 0 else first).candidate_slugs,
                snapshot=(subset if n % 5 == 0 else first).snapshot,
                snapshot_json=(subset if n % 5 == 0 else first).snapshot_json,
                sha256=(subset if n % 5 == 0 else first).sha256,
                fingerprint=(subset if n % 5 == 0 else first).fingerprint,
                required_roles=first.required_roles,
                status=SheetStatus.READY,
            )
            for n in range(3, REVISIONS + 1)
        )
        client = Client()
        client.force_login(user)
        url = f"/projects/{project.slug}/sheets/"

        def visit() -> tuple[float, int]:
            with CaptureQueriesContext(connection) as queries:
                start = time.perf_counter()
                response = client.get(url)
                seconds = time.perf_counter() - start
            assert response.status_code == 200, response.status_code
            return seconds, len(queries.captured_queries)

        cold, cold_queries = visit()
        warm = [visit() for _ in range(VISITS)]
        warm_ms = statistics.median(s for s, _q in warm) * 1000
        # A nightly CI post changes the project: the next visit rebuilds the fingerprints.
        result = Result.objects.filter(project=project).order_by("-pk").first()
        assert result is not None
        poc_services.result_record(
            candidate=result.candidate,
            action=result.action,
            outcome="not_covered" if result.outcome != "not_covered" else "passed",
            change_reason="bench",
            actor=None,
        )
        changed, _q = visit()
        print(
            f"sheets list: {REVISIONS} revisions of a {CANDIDATES} x {ACTIONS} project "
            f"(10 CI runs of history, evidence on every result), page of 20"
        )
        print(
            f"warm visit (fingerprint cached): {warm_ms:.1f} ms median of {VISITS}, "
            f"{warm[0][1]} queries (target < 100 ms): {'OK' if warm_ms < 100 else 'OVER'}"
        )
        print(f"first visit (two fingerprints):  {cold * 1000:.0f} ms, {cold_queries} queries")
        print(f"first visit after a CI result:   {changed * 1000:.0f} ms")
        print(f"ratio first / warm:              {cold * 1000 / warm_ms:.0f}x")
    finally:
        teardown()


if __name__ == "__main__":
    main()
