"""Probe verdicts become PoC results: the results side's recorder for GPU evidence
(poc.probes.recording), registered by poc.apps. For every action of the run's project bound to a
check, the check is run on the facts and its verdict recorded through the ingest service CI
posts use (append-only, new / regressed / recovered), citing the raw outputs as evidence."""

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.utils.translation import gettext as _

from evaluations.models import ApiToken, Candidate
from poc.models import Outcome, Result, Source
from poc.probes.facts import NodeFacts
from poc.probes.models import ProbeRun, ProbeSource
from poc.probes.recording import Recorded
from poc.probes.rules import checks
from poc.probes.services.probes import Binding, bindings_for_project
from poc.services.ingest import ResultRow, RunData, results_ingest
from workbench.storage import StoredFile
from workbench.typing import JSONObject

MAX_NOTE = 2000
CHANGE_COUNTS = ("new", "unchanged", "changed", "regressed", "recovered")


class ResultsRecorder:
    """Records a probe run's verdicts as results, and lists them for the run's page."""

    def record(
        self,
        run: ProbeRun,
        facts: list[NodeFacts],
        cited: list[StoredFile],
        *,
        actor: User | None,
        token: ApiToken | None,
        cluster_facts: JSONObject | None,
    ) -> Recorded | None:
        return _record(run, facts, cited, actor=actor, token=token, cluster_facts=cluster_facts)

    def results_of(self, run: ProbeRun) -> Sequence[Result]:
        if run.run_id is None:
            return []
        return list(
            Result.objects.filter(candidate_id=run.candidate_id, run_id=run.run_id, source="probe")
            .select_related("action")
            .order_by("action__position", "action__pk")
        )


def _record(
    run: ProbeRun,
    facts: list[NodeFacts],
    cited: list[StoredFile],
    *,
    actor: User | None,
    token: ApiToken | None = None,
    cluster_facts: JSONObject | None = None,
) -> Recorded | None:
    """A result for every bound action of the run's project, judged on `facts` (and what a
    cluster connector read beyond nodes), recorded through the ingest service CI posts use
    (append-only, new / regressed / recovered)."""
    bindings = bindings_for_project(run.project)
    rows = [_result_row(run, run.candidate, b, facts, cited, cluster_facts) for b in bindings]
    if not rows:
        return None
    record, notable = results_ingest(
        project=run.project,
        run=RunData(
            external_id=f"probe-{run.pk}",
            name=_("GPU probe %(id)s (%(source)s)")
            % {"id": run.pk, "source": ProbeSource(run.source).label},
            candidate=run.candidate.slug,
        ),
        rows=rows,
        token=token,
        user=actor,
        kind="probe",
        source=Source.PROBE,
    )
    run.run = record.run
    run.save(update_fields=["run"])
    return Recorded(
        results_run=record.run_id,
        stored=record.result_count,
        changes={change: getattr(record, change) for change in CHANGE_COUNTS},
        regressed=notable["regressed"],
        recovered=notable["recovered"],
    )


def _result_row(
    run: ProbeRun,
    candidate: Candidate,
    binding: Binding,
    facts: list[NodeFacts],
    cited: list[StoredFile],
    cluster_facts: JSONObject | None = None,
) -> ResultRow:
    verdict = checks.run_check(binding.check, binding.params, facts, cluster=cluster_facts)
    statement = verdict["check"]
    if verdict["status"] == "passed":
        outcome, cause = Outcome.PASSED, ""
        note = _("Probe run %(run)s: %(check)s — measured %(measured)s.")
    elif verdict["status"] == "failed":
        outcome = Outcome.FAILED
        cause = _("%(check)s not met: %(detail)s") % {
            "check": statement,
            "detail": verdict["detail"] or verdict["measured"],
        }
        note = _("Probe run %(run)s: %(check)s — measured %(measured)s.")
    else:
        outcome, cause = Outcome.NOT_COVERED, ""
        note = _("Probe run %(run)s could not check %(check)s: %(detail)s")
    text = note % {
        "run": run.pk,
        "check": statement,
        "measured": verdict["measured"] or "—",
        "detail": verdict["detail"],
    }
    return ResultRow(
        index=0,
        candidate_id=candidate.pk,
        action_id=binding.action.pk,
        outcome=outcome,
        note=text[:MAX_NOTE],
        failure_cause=cause[:MAX_NOTE],
        evidence_files=cited,
        candidate_slug=candidate.slug,
        action_key=binding.action.key,
    )
