"""Probe verdicts become PoC results: the results side's recorder for GPU evidence
(poc.probes.recording), registered by poc.apps. For every action of the run's project bound to a
check, the check is run on the facts and its verdict recorded through the ingest service CI
posts use (append-only, new / regressed / recovered), citing the raw outputs as evidence."""

from collections.abc import Sequence

from django.utils.translation import gettext as _

from poc.models import Outcome, Result, Source
from poc.probes.models import ProbeRun, ProbeSource
from poc.probes.recording import Recorded, StoredRun
from poc.probes.rules import checks
from poc.probes.services.probes import Binding, bindings_for_project
from poc.services.ingest import ResultRow, RunData, results_ingest

MAX_NOTE = 2000
CHANGE_COUNTS = ("new", "unchanged", "changed", "regressed", "recovered")


class ResultsRecorder:
    """Records a probe run's verdicts as results, and lists them for the run's page."""

    def record(self, stored: StoredRun) -> Recorded | None:
        """A result for every bound action of the run's project, judged on the nodes' facts
        (and what a cluster connector read beyond nodes), recorded through the ingest service
        CI posts use (append-only, new / regressed / recovered)."""
        run = stored.run
        rows = [_result_row(stored, binding) for binding in bindings_for_project(run.project)]
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
            token=stored.token,
            user=stored.actor,
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

    def results_of(self, run: ProbeRun) -> Sequence[Result]:
        if run.run_id is None:
            return []
        return list(
            Result.objects.filter(candidate_id=run.candidate_id, run_id=run.run_id, source="probe")
            .select_related("action")
            .order_by("action__position", "action__pk")
        )


def _result_row(stored: StoredRun, binding: Binding) -> ResultRow:
    run, candidate = stored.run, stored.run.candidate
    verdict = checks.run_check(
        binding.check, binding.params, stored.facts, cluster=stored.cluster_facts
    )
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
        evidence_files=stored.cited,
        candidate_slug=candidate.slug,
        action_key=binding.action.key,
    )
