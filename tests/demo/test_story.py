"""`manage.py demo` builds a review near its end: most cells decided by people, by CI runs and
by probe runs of real captures; responsibilities with deliberate gaps; terms and costs for
every candidate."""

from collections import Counter

import pytest
from django.core.files.storage import default_storage

from evaluations.models import AcceptanceAction, Candidate, Project
from evaluations.selectors import candidates_in_play
from poc.models import (
    Evidence,
    EvidenceKind,
    Outcome,
    Responsibility,
    ResponsibilityArea,
    ResultCell,
    RunImport,
    Source,
)
from poc.probes.demo import CAPTURES
from poc.probes.models import Cluster, ProbeNode, ProbeRun, ProbeSource, ProbeStatus
from poc.selectors.trends import ci_trends
from reports.procurement.models import CostLine, CostModel, TermEntry

pytestmark = pytest.mark.django_db


def test_most_cells_are_decided_by_people_ci_and_probes(demo: Project) -> None:
    in_play = candidates_in_play(demo)
    assert len(in_play) == 4
    cells = ResultCell.objects.filter(project=demo, candidate__in=in_play).select_related("result")
    total = AcceptanceAction.objects.filter(project=demo).count() * len(in_play)
    assert cells.count() / total > 0.8
    assert cells.count() < total  # a few are still open: the review is near its end, not done
    by_source = Counter(cell.result.source for cell in cells)
    assert by_source[Source.MANUAL] >= 100
    assert by_source[Source.CI] >= 60
    assert by_source[Source.PROBE] >= 30
    outcomes = Counter(cell.outcome for cell in cells)
    assert all(outcomes[outcome] >= 10 for outcome in Outcome.values)
    by_people = [cell.result for cell in cells if cell.result.source == Source.MANUAL]
    assert all(r.failure_cause for r in by_people if r.outcome == Outcome.FAILED)
    assert all(r.note for r in by_people if r.outcome == Outcome.NOT_COVERED)  # the reason
    gaps = [r for r in by_people if r.outcome == Outcome.NEEDS_INTEGRATION]
    assert len(gaps) >= 15
    assert all(r.integration_what and r.integration_owner_team for r in gaps)
    assert all(r.integration_effort_days is not None for r in gaps)
    assert {r.integration_owner_team for r in gaps} >= {"platform", "ops", "architecture"}
    assert sum(bool(r.note) for r in by_people) >= 60
    recorders = {r.recorded_by.username for r in by_people if r.recorded_by}
    assert recorders >= {"platform", "ops", "architecture"}


def test_ci_runs_over_time_show_trends_regressions_and_recoveries(demo: Project) -> None:
    posts = RunImport.objects.filter(run__project=demo)
    assert set(posts.values_list("kind", flat=True)) == {"json", "junit", "probe"}
    trends = ci_trends(demo)
    assert len(trends.trends) == 4
    for trend in trends.trends:
        ci_runs = [run for run in trend.runs if "acceptance" in run.name]
        assert len(ci_runs) >= 3
    k8s = next(t for t in trends.trends if t.candidate.slug == "k8s-gpu-operator")
    rates = [run.percent for run in k8s.runs if "acceptance" in run.name]
    assert rates == sorted(rates) and rates[0] < rates[-1]  # the teams fixed things
    regressions = {(m.candidate.slug, m.action.key) for m in trends.regressions}
    recoveries = {(m.candidate.slug, m.action.key) for m in trends.recoveries}
    assert ("volcano", "cf-node-alert") in regressions
    assert ("slurm", "cf-node-job-retry") in recoveries
    flaky = {(f.candidate.slug, f.action.key): f.flips for f in trends.flaky}
    assert flaky[("volcano", "cf-preempted-job-resume")] == 4
    failed = ResultCell.objects.get(candidate__slug="volcano", action__key="cf-node-alert").result
    assert failed.source == Source.CI and "rule was lost" in failed.failure_cause
    assert failed.evidence.filter(kind=EvidenceKind.LINK).exists()


def test_probe_runs_are_real_captures_and_decide_their_actions(demo: Project) -> None:
    runs = ProbeRun.objects.filter(project=demo)
    assert runs.count() == 4
    assert set(runs.values_list("source", flat=True)) == {
        ProbeSource.AGENT,
        ProbeSource.UPLOAD,
        ProbeSource.DOCUMENTS,
    }
    assert set(runs.values_list("status", flat=True)) == {ProbeStatus.DONE}
    models = {
        gpu["name"] for node in ProbeNode.objects.filter(run__project=demo)
        for gpu in node.facts["gpus"]
    }  # fmt: skip
    assert {"NVIDIA H200", "NVIDIA L40S", "Tesla-T4"} <= models
    documents = runs.get(source=ProbeSource.DOCUMENTS)
    assert documents.cluster is not None and documents.cluster.candidate.slug == "volcano"
    for output in documents.outputs.all():
        assert default_storage.exists(output.file.name)
    verdicts = {
        (cell.candidate.slug, cell.action.key): cell.result
        for cell in ResultCell.objects.filter(
            project=demo, result__source=Source.PROBE
        ).select_related("candidate", "action", "result")
    }
    assert verdicts[("k8s-gpu-operator", "gpu-probe-matmul")].outcome == Outcome.PASSED
    xid = verdicts[("slurm", "gpu-probe-xid")]
    assert xid.outcome == Outcome.FAILED and "Xid 79" in xid.failure_cause
    driver = verdicts[("volcano", "gpu-probe-driver")]
    assert driver.outcome == Outcome.FAILED and "525.60.13" in driver.failure_cause
    quota = verdicts[("volcano", "cluster-probe-over-quota")]
    assert quota.outcome == Outcome.PASSED
    assert ("runai", "gpu-probe-health") in verdicts
    # A person checked by hand what the agent's bundle could not read.
    operator = ResultCell.objects.get(
        candidate__slug="k8s-gpu-operator", action__key="cluster-probe-gpu-operator"
    ).result
    assert operator.source == Source.MANUAL and operator.previous.source == Source.PROBE
    assert operator.change_reason


def test_clusters_are_registered_and_never_probed_live(demo: Project) -> None:
    clusters = Cluster.objects.filter(project=demo)
    assert set(clusters.values_list("kind", flat=True)) == {"kubernetes", "slurm_rest", "ssh"}
    assert {c.candidate.slug for c in clusters} == {"k8s-gpu-operator", "volcano", "slurm", "runai"}
    assert all(c.schedule_minutes is None for c in clusters)
    live = (ProbeSource.SSH, ProbeSource.KUBERNETES, ProbeSource.SLURM)
    assert not ProbeRun.objects.filter(project=demo, source__in=live).exists()


def test_evidence_people_attached_is_stored(demo: Project) -> None:
    files = Evidence.objects.filter(project=demo, kind=EvidenceKind.FILE, uploaded_by__isnull=False)
    attached = {e.name: e for e in files if e.name.endswith((".log", ".txt"))}
    plugin_log = attached["device-plugin-xid-48-unhealthy.log"]
    assert plugin_log.result.candidate.slug == "k8s-gpu-operator"
    with default_storage.open(plugin_log.file.name, "rb") as handle:
        assert handle.read() == (CAPTURES / plugin_log.name).read_bytes()
    assert "kubectl-get-clusterpolicy-ready.txt" in attached
    links = Evidence.objects.filter(project=demo, kind=EvidenceKind.LINK, result__source="manual")
    assert links.count() == 2


def test_responsibilities_hold_most_areas_with_deliberate_gaps(demo: Project) -> None:
    in_play = candidates_in_play(demo)
    held = set(
        Responsibility.objects.filter(candidate__in=in_play).values_list("candidate__slug", "area")
    )
    grid = {(c.slug, area) for c in in_play for area in ResponsibilityArea.values}
    missing = grid - held
    assert len(held) / len(grid) > 0.8
    assert ("k8s-gpu-operator", "training") in missing
    assert ("runai", "exit_migration") in missing
    assert len({slug for slug, _area in missing}) >= 3


def test_every_candidate_has_terms_and_costs(demo: Project) -> None:
    candidates = Candidate.objects.filter(project=demo)
    with_terms = set(
        TermEntry.objects.filter(project=demo).values_list("candidate__slug", flat=True)
    )
    assert with_terms == {c.slug for c in candidates}
    assert CostModel.objects.filter(project=demo).exists()
    costed = set(CostLine.objects.filter(project=demo).values_list("candidate__slug", flat=True))
    assert costed >= {c.slug for c in candidates_in_play(demo)} | {None}
