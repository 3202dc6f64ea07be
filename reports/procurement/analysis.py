"""What procurement asks of the totals beyond the totals (docs/costs.md, comparing): how each
candidate compares with the baseline, at which fleet size two candidates cost the same, which
inputs move a total most and whether they change which candidate is cheapest, and how likely
each candidate is to be the cheapest when every line may land anywhere in its range.

Reads no row: it works on `costs.Costs` (each line's total over the horizon is kept there).
Break-even and the tornado are exact (`Decimal`); the ranking probability samples with floats,
seeded, so the same inputs give the same shares.
"""

import random
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from math import sqrt
from operator import add

from reports.procurement.costs import ZERO, Costs, Line, Range

SAMPLES = 1000
SEED = 20261204
SWINGS_SHOWN = 10


@dataclass(frozen=True)
class BreakEven:
    """Where two candidates cost the same over the horizon: at `scale` x the fleet (every
    count grown alike), `gpus` GPUs in year 1. Below it `below` is the cheaper one."""

    scale: Decimal
    gpus: Decimal | None
    below: int  # 0: the first candidate given, 1: the second


def break_even(first: Costs, second: Costs, gpus: Decimal) -> BreakEven | None:
    """The fleet size where the expected totals meet; None where they never do at a positive
    size (one is cheaper at every size, or both grow alike). A total is F + V x s, with V the
    lines that grow with the fleet and s the fleet's scale (docs/costs.md)."""
    v1, v2 = first.scaling.expected, second.scaling.expected
    f1, f2 = first.total.expected - v1, second.total.expected - v2
    if v1 == v2:
        return None
    scale = (f2 - f1) / (v1 - v2)
    if scale <= 0:
        return None
    # Below the meeting point the one with the smaller fixed part (it grows faster) is cheaper.
    return BreakEven(scale, scale * gpus if gpus else None, 0 if v1 > v2 else 1)


@dataclass(frozen=True)
class Swing:
    """One input moved from its low to its high figure, the rest at expected: the candidate's
    total at each end, and whether either end changes which candidate is cheapest."""

    line: Line
    at_low: Decimal
    at_high: Decimal
    changes_ranking: bool

    @property
    def width(self) -> Decimal:
        return self.at_high - self.at_low


def tornado(
    totals: Sequence[Decimal], index: int, costs: Costs, limit: int = SWINGS_SHOWN
) -> list[Swing]:
    """The inputs of candidate `index` that move its total most, widest first; `totals` are
    every candidate's expected totals (to judge the ranking). Inputs without a range are left
    out: they cannot move."""
    own = totals[index]
    others = [t for i, t in enumerate(totals) if i != index]
    best_other = min(others) if others else None
    leads = best_other is None or own <= best_other
    swings = []
    for line, total in costs.lines:
        if total.high == total.low:
            continue
        at_low = own - total.expected + total.low
        at_high = own - total.expected + total.high
        if best_other is None:
            changes = False
        elif leads:
            changes = at_high > best_other
        else:
            changes = at_low < best_other
        swings.append(Swing(line, at_low, at_high, changes))
    swings.sort(key=lambda s: s.width, reverse=True)
    return swings[:limit]


def _draws(low: float, mode: float, high: float, uniforms: list[float]) -> list[float]:
    """Triangular draws on [low, high] peaking at `mode`, from uniforms (inverse CDF)."""
    span = high - low
    cut = (mode - low) / span
    left, right = span * (mode - low), span * (high - mode)
    return [low + sqrt(u * left) if u < cut else high - sqrt((1 - u) * right) for u in uniforms]


def cheapest_shares(
    candidates: Sequence[Costs], samples: int = SAMPLES, seed: int = SEED
) -> list[float]:
    """For each candidate, the share of `samples` draws in which it is the cheapest over the
    horizon. Each draw puts every line anywhere in its low-high range (triangular, peaking at
    the expected figure) independently of the others; a line's years move together. Ties go
    to the first candidate."""
    if not candidates:
        return []
    rng = random.Random(seed)
    sampled: list[list[float]] = []
    for costs in candidates:
        fixed = float(sum((t.expected for _l, t in costs.lines if t.low == t.high), ZERO))
        acc = [fixed] * samples
        for _line, total in costs.lines:
            if total.low == total.high:
                continue
            uniforms = [rng.random() for _ in range(samples)]
            low, mode, high = float(total.low), float(total.expected), float(total.high)
            acc = list(map(add, acc, _draws(low, mode, high, uniforms)))
        sampled.append(acc)
    wins = [0] * len(candidates)
    indices = range(len(candidates))
    for column in zip(*sampled, strict=True):
        wins[min(indices, key=column.__getitem__)] += 1
    return [count / samples for count in wins]


def versus(candidate: Range, baseline: Range) -> Range:
    """The candidate's total less the baseline's: expected less expected, and the widest
    difference the two ranges allow (its low against the baseline's high, and the reverse)."""
    return Range(
        candidate.low - baseline.high,
        candidate.expected - baseline.expected,
        candidate.high - baseline.low,
    )
