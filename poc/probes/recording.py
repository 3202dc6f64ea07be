"""Where a probe run's verdicts go, without GPU evidence knowing the results they feed.

Dependencies run one way: the results side (poc) builds on GPU evidence, never the reverse. A
stored probe run still has to become PoC results for the actions bound to a check, and its page
lists them; the results side registers a `Recorder` at start-up (poc.apps) that does both. With
none registered (GPU evidence on its own), a run records nothing and lists nothing.

Layers further up that only need to know a run was stored (the compatibility matrix closes the
questions a run answered) listen to `run_stored` instead.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.contrib.auth.models import User
from django.dispatch import Signal

from evaluations.models import ApiToken
from poc.probes.facts import NodeFacts
from poc.probes.models import ProbeRun
from workbench.storage import StoredFile
from workbench.typing import JSONObject


@dataclass(frozen=True)
class Recorded:
    """What the results side made of a run's verdicts: the results run they went into, how many
    were stored, the change counts (new, unchanged, changed, regressed, recovered) and the cells
    that regressed or recovered ({"candidate": slug, "action": key})."""

    results_run: int
    stored: int
    changes: dict[str, int]
    regressed: list[dict[str, str]] = field(default_factory=list)
    recovered: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class StoredRun:
    """A stored run as the results side is handed it: the facts of its nodes, the raw outputs
    results may cite, who made it, and what a cluster connector read beyond nodes."""

    run: ProbeRun
    facts: list[NodeFacts]
    cited: list[StoredFile]
    actor: User | None
    token: ApiToken | None = None
    cluster_facts: JSONObject | None = None


class Recorder(Protocol):
    def record(self, stored: StoredRun) -> Recorded | None:
        """Record the run's verdicts as results, inside the caller's transaction; None when no
        action is bound to a check."""
        ...

    def results_of(self, run: ProbeRun) -> Sequence[Any]:
        """The results the run recorded, for its page (each with .action, .outcome, ...)."""
        ...


_recorders: list[Recorder] = []

# Sent inside the caller's transaction once a run with facts is stored and recorded, with
# `run` (a ProbeRun whose nodes are saved) and `actor` (who started it, or None).
run_stored = Signal()


def recorder_register(recorder: Recorder) -> None:
    """Called once by the results side's AppConfig.ready (a second call replaces the first)."""
    _recorders[:] = [recorder]


def run_record(
    run: ProbeRun,
    facts: list[NodeFacts],
    cited: list[StoredFile],
    *,
    actor: User | None,
    token: ApiToken | None = None,
    cluster_facts: JSONObject | None = None,
) -> Recorded | None:
    """Hand a stored run to the registered recorder (None without one), then tell those who
    listen to `run_stored`."""
    stored = StoredRun(run, facts, cited, actor, token, cluster_facts)
    recorded = _recorders[0].record(stored) if _recorders else None
    run_stored.send(sender=ProbeRun, run=run, actor=actor)
    return recorded


def run_results(run: ProbeRun) -> Sequence[Any]:
    return _recorders[0].results_of(run) if _recorders else []
