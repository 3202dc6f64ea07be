"""CI trends across runs, for the CI runs page: each candidate's pass rate over its last runs,
the actions whose outcome keeps flipping from run to run, and the cells the newest run of each
candidate broke or mended.

Built on the tallies of the project's newest posts (`poc.run_tallies`: per post and
candidate, the results posted, passed and the actions moved, counted once from the stored
results), then one query for the results of the few cells worth listing, on the cells' index,
and one for their actions: the same queries whatever the length of the history. A run is a CI
run (its external id); its posts count together. Results recorded by hand belong to no run
and are not in the trends.
"""

import heapq
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from evaluations.models import AcceptanceAction, Candidate, Project
from poc import charts
from poc.models import Outcome, Result
from poc.run_tallies import Window, post_window
from poc.templatetags.poc_tags import ICONS

TREND_RUNS = 30  # the runs of each candidate the trends cover
FLAKY_MIN_FLIPS = 2
FLAKY_SCAN = 100  # cells whose results are read to count their flips
FLAKY_ROWS = 50  # flaky cells listed
MOVE_SCAN = 500  # cells the newest runs moved whose results are read
MOVE_ROWS = 100  # regressions listed, and recoveries
BROKEN = (Outcome.FAILED, Outcome.NEEDS_INTEGRATION)
# Results are stamped a moment before their post; any margin above that only reads more rows.
STAMP_MARGIN = timedelta(hours=1)


def percent_text(value: float) -> str:
    """A percentage with at most one decimal, as the page's tables write it."""
    return f"{value:.1f}".removesuffix(".0")


@dataclass
class RunRate:
    """A candidate's results in one run: how many were posted and how many passed."""

    run_id: int
    name: str
    posted_at: datetime  # the run's newest post for the candidate
    started_at: datetime  # and its oldest
    passed: int = 0
    total: int = 0
    posts: list[int] = field(default_factory=list)

    @property
    def percent(self) -> float:
        return 100 * self.passed / self.total if self.total else 0.0

    @property
    def percent_text(self) -> str:
        return percent_text(self.percent)


@dataclass
class CandidateTrend:
    candidate: Candidate
    runs: list[RunRate]  # oldest first, at most TREND_RUNS

    @property
    def newest(self) -> RunRate:
        return self.runs[-1]

    @property
    def name(self) -> str:
        return f"{self.candidate.solution.name} {self.candidate.version}".strip()

    @property
    def chart(self) -> SafeString:
        rates = [run.percent for run in self.runs]
        figures = {
            "candidate": self.name,
            "runs": len(rates),
            "oldest": percent_text(rates[0]),
            "newest": percent_text(rates[-1]),
            "lowest": percent_text(min(rates)),
            "highest": percent_text(max(rates)),
        }
        if len(rates) == 1:
            title = _("Pass rate of %(candidate)s in its only run: %(newest)s %%") % figures
        else:
            title = (
                _(
                    "Pass rate of %(candidate)s over its last %(runs)d runs, oldest to newest: "
                    "from %(oldest)s %% to %(newest)s %%, lowest %(lowest)s %%, "
                    "highest %(highest)s %%"
                )
                % figures
            )
        points = [(run.name, run.percent) for run in self.runs]
        return charts.pass_rate_line(points, slots=TREND_RUNS, title=title)

    @property
    def figures(self) -> SafeString:
        """The chart's figures as a table, for those who do not see it."""
        return charts.figures_table(
            _("Pass rate of %(candidate)s per run, oldest first") % {"candidate": self.name},
            (_("Run"), _("Passed"), _("Results"), _("Pass rate")),
            [(r.name, r.passed, r.total, f"{r.percent_text} %") for r in self.runs],
        )


@dataclass(frozen=True)
class FlakyCell:
    """An action whose outcome for a candidate changed from run to run `flips` times."""

    candidate: Candidate
    action: AcceptanceAction
    outcomes: tuple[str, ...]  # oldest first, one per run that posted the cell
    flips: int

    @property
    def symbols(self) -> str:
        """The sequence as icons: ✓✗✓✗."""
        return "".join(ICONS[outcome] for outcome in self.outcomes)

    @property
    def words(self) -> str:
        """The sequence in words, for screen readers."""
        labels = {value: str(label) for value, label in Outcome.choices}
        return ", ".join(labels[outcome] for outcome in self.outcomes)


@dataclass(frozen=True)
class CellMove:
    """A cell the newest run of its candidate moved between passed and failed (or needs
    integration): its outcome before the run and at the end of the run."""

    candidate: Candidate
    action: AcceptanceAction
    run: RunRate
    post_id: int  # the post that left the cell as it is
    before: str
    now: str


@dataclass
class CiTrends:
    trends: list[CandidateTrend]
    flaky: list[FlakyCell]
    flaky_more: int  # flaky cells found beyond those listed
    regressions: list[CellMove]  # at most MOVE_ROWS
    recoveries: list[CellMove]  # at most MOVE_ROWS
    regressions_more: int  # found beyond those listed
    recoveries_more: int
    moves_cut: bool  # the newest runs moved more than MOVE_SCAN cells: the lists stop there
    cut: bool  # older runs exist that the trends leave out
    counting: bool  # older posts are still to be counted (the next visit counts on)
    runs_per_candidate: int = TREND_RUNS


Cell = tuple[int, int]  # (candidate id, action id)
Row = tuple[int, int, int, int, str, str | None]  # cell, post, result, outcome, previous outcome
FlakyRow = tuple[Cell, tuple[str, ...], int]  # cell, outcome per run, flips
MoveRow = tuple[Cell, int, str, str]  # cell, post, outcome before, outcome after


def _rates(window: Window) -> dict[int, list[RunRate]]:
    """Candidate id -> its last TREND_RUNS runs in the window, oldest first. A run with posts
    beyond the window's cut is left out: its figures would be partial."""
    posts = [post for post in window.posts if post.run_id != window.partial_run]
    runs: dict[int, dict[int, RunRate]] = defaultdict(dict)
    for post in posts:
        for candidate_id, (passed, total, _moved) in window.tallies[post.pk].items():
            rate = runs[candidate_id].setdefault(
                post.run_id, RunRate(post.run_id, post.run_name, post.posted_at, post.posted_at)
            )
            rate.posted_at = max(rate.posted_at, post.posted_at)
            rate.started_at = min(rate.started_at, post.posted_at)
            rate.passed += passed
            rate.total += total
            rate.posts.append(post.pk)
    return {
        candidate_id: sorted(rates.values(), key=lambda r: (r.posted_at, r.run_id))[-TREND_RUNS:]
        for candidate_id, rates in runs.items()
    }


def _moved(trends: list[CandidateTrend], window: Window) -> tuple[list[Cell], list[Cell]]:
    """The cells that may be flaky (moved in at least FLAKY_MIN_FLIPS runs after a
    candidate's oldest one: a flip from one run to the next moves the cell in the later run),
    most moves first; and the cells the newest run of each candidate moved."""
    maybe: list[tuple[int, int, int]] = []  # (moves, candidate, action)
    newest: list[Cell] = []
    for trend in trends:
        c, moves = trend.candidate.pk, Counter[int]()
        for run in trend.runs[1:]:
            moved = [window.tallies[post][c][2] for post in run.posts]
            moves.update(moved[0] if len(moved) == 1 else set().union(*moved))
        maybe += [(n, c, a) for a, n in moves.items() if n >= FLAKY_MIN_FLIPS]
        newest += [
            (c, a) for a in sorted({a for p in trend.newest.posts for a in window.tallies[p][c][2]})
        ]
    flaky = [(c, a) for _n, c, a in heapq.nlargest(FLAKY_SCAN, maybe)]
    return flaky, newest


def _results_of(trends: list[CandidateTrend], flaky: set[Cell], moved: set[Cell]) -> list[Row]:
    """The results of the cells in their candidate's runs of the trends (the newest run only
    for cells not `flaky`), oldest first, in one query on the cells' index (candidate, action,
    recorded_at): per candidate, its actions since its oldest or its newest run."""
    runs = {trend.candidate.pk: trend.runs for trend in trends}
    actions: dict[tuple[int, bool], list[int]] = defaultdict(list)
    for candidate_id, action_id in sorted(flaky | moved):
        actions[(candidate_id, (candidate_id, action_id) in flaky)].append(action_id)
    where = Q(
        *(
            Q(
                candidate_id=candidate_id,
                action_id__in=action_ids,
                recorded_at__gte=(
                    runs[candidate_id][0] if every else runs[candidate_id][-1]
                ).started_at
                - STAMP_MARGIN,
            )
            for (candidate_id, every), action_ids in actions.items()
        ),
        _connector=Q.OR,
    )
    own = {c: {pk for run in runs[c] for pk in run.posts} for c, _every in actions}
    rows = (
        Result.objects.filter(where)
        .values_list(
            "candidate_id", "action_id", "run_import_id", "pk", "outcome", "previous__outcome"
        )
        .order_by()
    )
    return sorted((row for row in rows if row[2] in own[row[0]]), key=lambda row: row[3])


def _flips(trends: list[CandidateTrend], rows: list[Row], cells: set[Cell]) -> list[FlakyRow]:
    """(cell, outcome per run, flips) of `cells` that flipped at least FLAKY_MIN_FLIPS times
    from run to run: a run's outcome for a cell is its last result's."""
    run_of = {pk: run.run_id for trend in trends for run in trend.runs for pk in run.posts}
    order = {(t.candidate.pk, run.run_id): i for t in trends for i, run in enumerate(t.runs)}
    last: dict[Cell, dict[int, str]] = defaultdict(dict)
    for candidate_id, action_id, post_pk, _pk, outcome, _previous in rows:
        if (candidate_id, action_id) in cells:
            last[(candidate_id, action_id)][run_of[post_pk]] = outcome
    found = []
    for (candidate_id, action_id), by_run in last.items():
        runs = sorted(by_run, key=lambda run_id: order[(candidate_id, run_id)])
        outcomes = tuple(by_run[run_id] for run_id in runs)
        flips = sum(1 for a, b in zip(outcomes, outcomes[1:], strict=False) if a != b)
        if flips >= FLAKY_MIN_FLIPS:
            found.append(((candidate_id, action_id), outcomes, flips))
    return found


def _ends(trends: list[CandidateTrend], rows: list[Row], cells: set[Cell]) -> list[MoveRow]:
    """(cell, post, outcome before the newest run, outcome at its end) of `cells`, whatever
    the run's posts did between."""
    newest = {trend.candidate.pk: set(trend.newest.posts) for trend in trends}
    before: dict[Cell, str] = {}
    after: dict[Cell, tuple[int, str]] = {}
    for candidate_id, action_id, post_pk, _pk, outcome, previous in rows:
        cell = (candidate_id, action_id)
        if cell in cells and post_pk in newest[candidate_id]:
            before.setdefault(cell, previous or "")
            after[cell] = (post_pk, outcome)
    return [(cell, after[cell][0], was, after[cell][1]) for cell, was in before.items()]


def ci_trends(project: Project) -> CiTrends:
    """The trends of the project's CI runs (see the module's docstring). Queries: the window
    of posts (and a count of the posts not counted yet, if any), the candidates, and when
    there is something to list, the results of the cells listed and their actions."""
    window = post_window(project)
    rates = _rates(window)
    candidates = Candidate.objects.filter(project=project, pk__in=list(rates)).select_related(
        "solution"
    )
    trends = [
        CandidateTrend(candidate, rates[candidate.pk])
        for candidate in candidates.order_by("position", "pk")
    ]
    maybe_flaky, moved = _moved(trends, window)
    moves_cut, moved = len(moved) > MOVE_SCAN, moved[:MOVE_SCAN]
    rows = _results_of(trends, set(maybe_flaky), set(moved)) if maybe_flaky or moved else []
    flaky = sorted(_flips(trends, rows, set(maybe_flaky)), key=lambda f: -f[2])
    moves = [
        move
        for move in _ends(trends, rows, set(moved))
        if (move[2] == Outcome.PASSED and move[3] in BROKEN)
        or (move[2] in BROKEN and move[3] == Outcome.PASSED)
    ]
    wanted = {a for (_c, a), *_rest in flaky[:FLAKY_ROWS]} | {a for (_c, a), *_rest in moves}
    actions = (
        AcceptanceAction.objects.select_related("requirement").in_bulk(wanted) if wanted else {}
    )
    by_candidate = {trend.candidate.pk: (n, trend) for n, trend in enumerate(trends)}

    def place(cell: Cell) -> tuple[int, int, int, int]:
        action = actions[cell[1]]
        return (by_candidate[cell[0]][0], action.requirement.position, action.position, cell[1])

    flaky_cells = [
        FlakyCell(by_candidate[cell[0]][1].candidate, actions[cell[1]], outcomes, flips)
        for cell, outcomes, flips in sorted(flaky[:FLAKY_ROWS], key=lambda f: (-f[2], place(f[0])))
    ]
    regressions: list[CellMove] = []
    recoveries: list[CellMove] = []
    for cell, post_pk, was, now in sorted(moves, key=lambda m: place(m[0])):
        trend = by_candidate[cell[0]][1]
        move = CellMove(trend.candidate, actions[cell[1]], trend.newest, post_pk, was, now)
        (regressions if was == Outcome.PASSED else recoveries).append(move)
    return CiTrends(
        trends,
        flaky_cells,
        max(len(flaky) - FLAKY_ROWS, 0),
        regressions[:MOVE_ROWS],
        recoveries[:MOVE_ROWS],
        max(len(regressions) - MOVE_ROWS, 0),
        max(len(recoveries) - MOVE_ROWS, 0),
        moves_cut,
        window.cut,
        window.counting,
    )
