"""Where the database has no ARRAY_AGG (SQLite, which `make run` uses unless DATABASE_URL says
otherwise), the CI runs page counts the demo's posts as it does on PostgreSQL: the web server's
cache starts empty, so it counts the posts `manage.py demo` made in another process."""

import pytest

from evaluations.models import Project
from poc import run_tallies
from poc.models import Result, RunImport

pytestmark = pytest.mark.django_db


def test_counting_without_arrays_gives_the_same_tallies(demo: Project) -> None:
    posts = [
        run_tallies.Post(pk, run_id, "", posted_at, count)
        for pk, run_id, posted_at, count in RunImport.objects.filter(run__project=demo).values_list(
            "pk", "run_id", "posted_at", "result_count"
        )
    ]
    expected = run_tallies._count(posts)  # PostgreSQL's one grouped query
    counted: dict[int, run_tallies.Tally] = {post.pk: {} for post in posts}
    run_tallies._count_without_arrays(
        Result.objects.filter(run_import_id__in=list(counted)), counted
    )
    assert counted == expected
    moved = [actions for tally in counted.values() for *_n, actions in tally.values() if actions]
    assert len(moved) >= 5  # the regressions, recoveries and flips are in it
