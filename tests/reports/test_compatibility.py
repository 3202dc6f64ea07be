"""The support and compatibility matrix: probe runs fill "verified" (or "failed") from what
they read, with a link to the run; people state vendor claims, failures and open questions;
every claim is kept and the strongest shows; the sheet freezes and prints it; the API reads and
writes it. Nothing unverified reads as supported."""

import re
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from poc.probes.combinations import observed
from poc.probes.models import ProbeRun
from poc.probes.services import probes
from reports.diff import snapshot_changes
from reports.procurement.models import CompatibilityClaim
from reports.procurement.selectors import compatibility_matrix
from reports.procurement.services import Stack, compatibility_claim
from tests.poc.api_helpers import token_client
from tests.probes.helpers import bundle
from tests.reports.helpers import rendered

pytestmark = pytest.mark.django_db

H200 = Stack("NVIDIA H200", "580.159.04", "13.0")


@pytest.fixture
def probed(evaluation: dict[str, Any]) -> dict[str, Any]:
    run = probes.probe_ingest_bundle(
        project=evaluation["alpha"], candidate=evaluation["volcano"], bundle=bundle(), actor=None
    ).run
    return {**evaluation, "run": run}


def _rows(evaluation: dict[str, Any]) -> list[Any]:
    (matrix,) = [
        m
        for m in compatibility_matrix(evaluation["alpha"], [evaluation["volcano"]])
        if m.candidate == evaluation["volcano"]
    ]
    return matrix.rows


def test_a_probe_run_verifies_what_it_saw(probed) -> None:
    (row,) = _rows(probed)
    assert (row.parts["gpu_model"], row.parts["driver"], row.parts["cuda"]) == (
        "NVIDIA H200",
        "580.159.04",
        "13.0",
    )
    assert row.status == "verified"
    (claim,) = row.claims
    assert claim.run_id == probed["run"].pk and "gpu-node-01" in claim.source


def test_every_claim_is_kept_and_the_strongest_shows(probed) -> None:
    volcano = probed["volcano"]
    compatibility_claim(
        candidate=volcano, stack=H200, status="vendor", reference="Release notes 2.4", actor=None
    )
    (row,) = _rows(probed)
    assert row.status == "verified" and [c.status for c in row.claims] == ["verified", "vendor"]
    compatibility_claim(
        candidate=volcano, stack=H200, status="failed", note="NCCL hangs at 8 GPUs", actor=None
    )
    (row,) = _rows(probed)
    assert row.status == "failed" and len(row.claims) == 3
    # A combination only a vendor claims stays a claim: it is not shown as verified.
    compatibility_claim(
        candidate=volcano,
        stack=Stack("NVIDIA L40S", "550.54.15", "12.4"),
        status="vendor",
        reference="Support matrix PDF",
        actor=None,
    )
    statuses = {r.parts["gpu_model"]: r.status for r in _rows(probed)}
    assert statuses == {"NVIDIA H200": "failed", "NVIDIA L40S": "vendor"}


@pytest.mark.parametrize(
    ("stack", "status", "reference", "says"),
    [
        (H200, "verified", "", "Verified comes only from a probe run"),
        (H200, "vendor", "", "A vendor claim needs the document it is made in."),
        (H200, "failed", "", "Say how it failed"),
        (Stack(), "tbc", "", "Name at least one part of the combination"),
        (Stack(driver="5" * 121), "tbc", "", "driver: at most 120 characters each."),
        (H200, "works", "x", "works is not a status"),
    ],
)
def test_a_bad_claim_is_refused_and_nothing_is_kept(
    evaluation, stack, status, reference, says
) -> None:
    with pytest.raises(ValidationError, match=says):
        compatibility_claim(
            candidate=evaluation["volcano"],
            stack=stack,
            status=status,
            reference=reference,
            actor=None,
        )
    assert not CompatibilityClaim.objects.exists()


def test_a_kubernetes_run_names_runtime_platform_and_failures() -> None:
    run = ProbeRun(
        cluster_facts={
            "server_version": "v1.30.2",
            "nodes": [
                {"name": "gpu-a", "container_runtime": "containerd://1.7.13", "model": "H100"},
                {"name": "gpu-b", "container_runtime": "containerd://1.7.13"},
            ],
        }
    )

    def node(host: str, verdict: str, error: str = "") -> SimpleNamespace:
        facts = {"gpus": [{"name": "NVIDIA H100 80GB HBM3"}], "driver_version": "550.90.07",
                 "cuda_version": "12.4"}  # fmt: skip
        return SimpleNamespace(host=host, position=0, facts=facts, verdict=verdict, error=error)

    (seen,) = observed(
        run, [node("gpu-a", "healthy"), node("gpu-b", "failed"), node("gpu-c", "", "timed out")]
    )
    assert seen.runtime == "containerd://1.7.13" and seen.platform == "Kubernetes v1.30.2"
    assert seen.hosts == ("gpu-a", "gpu-b") and seen.failed
    slurm = ProbeRun(cluster_facts={"slurm_version": "24.05.4"})
    (batch,) = observed(slurm, [node("n1", "healthy")])
    assert batch.scheduler == "Slurm 24.05.4" and not batch.failed


def test_who_may_state_a_claim(probed, login) -> None:
    url = reverse("procurement:compatibility_claim", kwargs={"slug": "alpha"})
    form = {"candidate": "volcano", "gpu_model": "NVIDIA L40S", "status": "vendor",
            "reference": "Support matrix"}  # fmt: skip
    for person in ("dave", "procurement"):  # an observer, and procurement
        assert login(probed[person]).post(url, form).status_code == 403
    assert not CompatibilityClaim.objects.exists()
    refused = login(probed["bob"]).post(url, {**form, "reference": ""})  # ops
    assert refused.status_code == 422
    assert "A vendor claim needs the document" in refused.content.decode()
    assert login(probed["bob"]).post(url, form).status_code == 302
    page = login(probed["dave"]).get(reverse("procurement:compatibility", kwargs={"slug": "alpha"}))
    text = page.content.decode()
    assert "verified in the PoC" in text and "vendor claim" in text
    assert f"/probes/{probed['run'].pk}/" in text  # the run that verified it


def _pdf_text(sheet: Any) -> str:
    raw = subprocess.run(
        ["pdftotext", str(Path(sheet.pdf.path)), "-"], capture_output=True, text=True, check=True
    ).stdout
    return re.sub(r"\s+", " ", raw)


def test_the_sheet_freezes_and_prints_the_matrix(probed) -> None:
    sheet = rendered(probed)
    frozen = {m["slug"]: m for m in sheet.snapshot["compatibility"]}
    (row,) = frozen["volcano"]["rows"]
    assert row["status"] == "verified" and row["claims"][0]["run"] == probed["run"].pk
    text = _pdf_text(sheet)
    assert "Support and compatibility" in text and "NVIDIA H200" in text
    assert "verified in the PoC" in text
    compatibility_claim(
        candidate=probed["volcano"], stack=H200, status="failed", note="hangs", actor=None
    )
    from reports.snapshot import build_snapshot

    now = build_snapshot(probed["alpha"], language="en", candidate_slugs=sheet.candidate_slugs)
    changes = {(c.section, c.subject): c for c in snapshot_changes(sheet.snapshot, now).shown}
    change = changes[("Support and compatibility", "Volcano: NVIDIA H200 · 580.159.04 · 13.0")]
    assert (change.before, change.after) == ("verified in the PoC", "failed")  # words, not keys
    chinese = _pdf_text(rendered(probed, language="zh-hans"))
    assert "支持与兼容性" in chinese and "PoC 实测验证" in chinese


def test_the_api_reads_and_states_claims(probed) -> None:
    client, _token, _raw = token_client(probed["alpha"], scopes=("read", "costs:write"))
    (volcano,) = [
        m
        for m in client.get("/api/v1/projects/alpha/compatibility/").json()
        if m["candidate"] == "volcano"
    ]
    assert volcano["combinations"][0]["status"] == "verified"
    assert volcano["combinations"][0]["claims"][0]["probe_run"] == probed["run"].pk
    url = "/api/v1/projects/alpha/compatibility/claims/"
    body = {"candidate": "VOLCANO", "gpu_model": "NVIDIA L40S", "status": "vendor",
            "reference": "matrix.pdf"}  # fmt: skip
    assert client.post(url, body, format="json").status_code == 201
    unknown = client.post(url, {**body, "candidate": "kueue"}, format="json")
    assert unknown.status_code == 400 and "volcano" in unknown.json()["candidate"][0]
    typed = client.post(url, {**body, "status": "verified"}, format="json")
    assert typed.status_code == 400
    reader, _t, _r = token_client(probed["alpha"], scopes=("read",))
    assert reader.post(url, body, format="json").status_code == 403
    assert CompatibilityClaim.objects.count() == 1


def test_a_probe_run_closes_the_chase_of_a_combination_it_saw(evaluation) -> None:
    """A combination asked about and chased is answered by the run that verifies it: the chase
    closes with the run as its reference, without anyone stating a claim. Other chases stay."""
    from django.db import transaction

    from reports.procurement.models import Combination, Confirmation
    from reports.procurement.services import confirmation_set

    volcano = evaluation["volcano"]

    class Undone(Exception):
        pass

    # What a run of this bundle sees, learnt in a transaction that is then undone.
    with pytest.raises(Undone), transaction.atomic():
        seen = probes.probe_ingest_bundle(
            project=evaluation["alpha"], candidate=volcano, bundle=bundle(), actor=None
        ).run
        key = observed(seen)[0].key
        raise Undone
    assert not ProbeRun.objects.exists()
    compatibility_claim(candidate=volcano, stack=Stack(*key), status="tbc", actor=None)
    compatibility_claim(candidate=volcano, stack=Stack("NVIDIA B200"), status="tbc", actor=None)
    asked, other = Combination.objects.filter(candidate=volcano).order_by("pk")
    for combination in (asked, other):
        confirmation_set(candidate=volcano, subject=f"combo:{combination.pk}", actor=None)
    run = probes.probe_ingest_bundle(
        project=evaluation["alpha"], candidate=volcano, bundle=bundle(), actor=evaluation["alice"]
    ).run
    answered = Confirmation.objects.get(subject=f"combo:{asked.pk}")
    assert answered.closed_at is not None and answered.closed_by == evaluation["alice"]
    assert answered.closing_reference == f"verified in the PoC: probe run {run.pk}"
    assert Confirmation.objects.get(subject=f"combo:{other.pk}").closed_at is None
