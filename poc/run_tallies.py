"""What each CI post carried, counted once: per candidate, how many results it posted, how many
of them passed, and which actions it moved (its results regressed, recovered or otherwise
changed the cell's outcome).

A post never changes once it is stored (results are append-only and a post's results are
written in the post's own transaction), so its tally is kept in the cache for good: the ingest
keeps it as it stores the post (`remember`, from the rows it has in hand), and the trends of
the CI runs page read a whole window of posts without reading their results again. A post the
cache does not hold (stored before, or evicted) is counted from its stored results with one
grouped query; a page counts at most TALLY_BUDGET results of such posts, newest first, the
window stops at the first post still uncounted, and the next visit counts on. The key names
the post by id and by the instant it was posted, so that a database restored from an older
backup, whose new posts reuse ids, never meets the tally of another post.
"""

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.contrib.postgres.aggregates import ArrayAgg
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Q, QuerySet

from evaluations.models import Project
from poc.models import Change, Outcome, Result, RunImport

WINDOW_POSTS = 1500  # the project's newest posts read at most
TALLY_BUDGET = 120_000  # results of uncounted posts a page counts at most
TALLY_SECONDS = 60 * 60 * 24 * 30  # a tally the cache no longer holds is counted again
TALLY_FORMAT = 1
MOVES = frozenset((Change.REGRESSED, Change.RECOVERED, Change.CHANGED))
logger = logging.getLogger(__name__)

# candidate id -> (results passed, results posted, actions whose cell the post moved)
Tally = dict[int, tuple[int, int, tuple[int, ...]]]


@dataclass(frozen=True)
class Post:
    pk: int
    run_id: int
    run_name: str
    posted_at: datetime
    results: int


@dataclass(frozen=True)
class Window:
    posts: list[Post]  # newest first, each with its tally
    tallies: dict[int, Tally]  # by post id
    cut: bool  # older posts exist that the window leaves out
    counting: bool  # the window stops at posts not counted yet (the next visit counts on)
    partial_run: int | None  # the run of the newest post left out: some of its posts may be in


def _key(post_pk: int, posted_at: datetime) -> str:
    return f"ci-tally:{TALLY_FORMAT}:{post_pk}:{posted_at.timestamp():.6f}"


def tally_rows(rows: Iterable[tuple[int, int, str, str]]) -> Tally:
    """The tally of a post from its rows as stored: (candidate, action, outcome, change)."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    moved: dict[int, set[int]] = defaultdict(set)
    for candidate_id, action_id, outcome, change in rows:
        counts[candidate_id][0] += outcome == Outcome.PASSED
        counts[candidate_id][1] += 1
        if change in MOVES:
            moved[candidate_id].add(action_id)
    return {c: (passed, total, tuple(sorted(moved[c]))) for c, (passed, total) in counts.items()}


def _keep(tallies: dict[str, Tally]) -> None:
    """Keep tallies by key. A cache that cannot be reached costs only a count later."""
    try:
        cache.set_many(tallies, TALLY_SECONDS)
    except Exception:  # noqa: BLE001 - whatever the cache raises, the posts are stored
        logger.warning("could not keep the tallies of %d CI posts", len(tallies), exc_info=True)


def remember(post_pk: int, posted_at: datetime, tally: Tally) -> None:
    """Keep the tally of a post just stored (call it once the post is committed)."""
    _keep({_key(post_pk, posted_at): tally})


def _count(posts: list[Post]) -> dict[int, Tally]:
    """The tallies of `posts` from their results: one grouped query, on the posts' index."""
    tallies: dict[int, Tally] = {post.pk: {} for post in posts}
    results = Result.objects.filter(run_import_id__in=list(tallies))
    if connection.vendor != "postgresql":  # SQLite (development) has no ARRAY_AGG: two queries
        _count_without_arrays(results, tallies)
        return tallies
    rows = (
        results.values_list("run_import_id", "candidate_id")
        .annotate(
            passed=Count("pk", filter=Q(outcome=Outcome.PASSED)),
            total=Count("pk"),
            moved=ArrayAgg("action_id", filter=Q(change__in=MOVES), distinct=True),
        )
        .order_by()
    )
    for post_pk, candidate_id, passed, total, moved in rows:
        tallies[post_pk][candidate_id] = (passed, total, tuple(sorted(set(moved or ()))))
    return tallies


def _count_without_arrays(results: QuerySet[Result], tallies: dict[int, Tally]) -> None:
    """_count's figures where the database has no ARRAY_AGG: the moved actions apart."""
    moved: dict[tuple[int, int], set[int]] = defaultdict(set)
    for post_pk, candidate_id, action_id in results.filter(change__in=MOVES).values_list(
        "run_import_id", "candidate_id", "action_id"
    ):
        moved[(post_pk, candidate_id)].add(action_id)
    rows = (
        results.values_list("run_import_id", "candidate_id")
        .annotate(passed=Count("pk", filter=Q(outcome=Outcome.PASSED)), total=Count("pk"))
        .order_by()
    )
    for post_pk, candidate_id, passed, total in rows:
        tallies[post_pk][candidate_id] = (
            passed,
            total,
            tuple(sorted(moved[(post_pk, candidate_id)])),
        )


def post_window(project: Project) -> Window:
    """The project's newest posts (at most WINDOW_POSTS) with their tallies: from the cache,
    the posts not counted yet counted now within TALLY_BUDGET results. Queries: the posts,
    and one count when some are not counted yet."""
    rows = list(
        RunImport.objects.filter(run__project=project)
        .order_by("-posted_at", "-pk")
        .values_list("pk", "run_id", "run__name", "run__external_id", "posted_at", "result_count")[
            : WINDOW_POSTS + 1
        ]
    )
    posts = [
        Post(pk, run_id, name or external_id, posted_at, count)
        for pk, run_id, name, external_id, posted_at, count in rows[:WINDOW_POSTS]
    ]
    keys = {_key(post.pk, post.posted_at): post.pk for post in posts}
    try:
        kept = cache.get_many(keys)
    except Exception:  # noqa: BLE001 - without the cache, the page counts what it may
        logger.warning("could not read the tallies of CI posts", exc_info=True)
        kept = {}
    tallies: dict[int, Tally] = {keys[key]: tally for key, tally in kept.items()}
    todo: list[Post] = []
    budget, counting = TALLY_BUDGET, False
    for post in posts:
        if post.pk in tallies:
            continue
        if todo and post.results > budget:
            counting = True
            break
        todo.append(post)
        budget -= post.results
    if todo:
        counted = _count(todo)
        tallies.update(counted)
        _keep({_key(post.pk, post.posted_at): counted[post.pk] for post in todo})
    partial_run = rows[WINDOW_POSTS][1] if len(rows) > WINDOW_POSTS else None
    if counting:  # the window ends before the newest post not counted
        end = next(i for i, post in enumerate(posts) if post.pk not in tallies)
        partial_run = posts[end].run_id
        posts = posts[:end]
    return Window(posts, tallies, partial_run is not None, counting, partial_run)
