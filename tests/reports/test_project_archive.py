"""Backup and restore: a project written to one archive and restored after its rows and files
are gone comes back whole (result history, evidence and its hashes, probe outputs, sealed
sheets that still verify, the history chain, tokens that still work); a damaged archive or a
clash restores nothing."""

import io
import json
import shutil
import zipfile
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.db import connection
from rest_framework.test import APIClient

from evaluations.models import ApiToken, AuditHead, Project, ProjectEvent
from evaluations.selectors import audit_chain_break
from evaluations.services import api_token_create, api_token_find
from poc.models import (
    Evidence,
    Result,
)
from poc.probes.models import (
    Cluster,
    ProbeBinding,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
)
from poc.probes.services import clusters as cluster_services
from poc.probes.services import probes
from poc.services import evidence_attach_file
from reports.models import Sheet
from reports.services.archive import ArchiveError, archive_bytes, import_project
from reports.verify import verify_pdf
from tests.probes.helpers import bundle
from tests.reports.helpers import approve_all, rendered

pytestmark = pytest.mark.django_db


def _history(project: Project) -> list[tuple[Any, ...]]:
    """Each result with its cell and what it replaced: the history, without row ids."""
    rows = []
    for result in Result.objects.filter(project=project).order_by("pk"):
        previous = result.previous
        rows.append(
            (
                result.candidate.slug,
                result.action.key,
                result.outcome,
                previous.outcome if previous else None,
                previous.candidate_id == result.candidate_id if previous else None,
            )
        )
    return rows


@pytest.fixture
def full_project(evaluation: dict[str, Any]) -> dict[str, Any]:
    alpha, volcano = evaluation["alpha"], evaluation["volcano"]
    from poc.services import result_record

    again = result_record(
        candidate=volcano,
        action=evaluation["actions"][0],
        outcome="failed",
        failure_cause="quota not enforced",
        change_reason="the quota was off in the first run",
        actor=evaluation["bob"],
    )
    evidence_attach_file(
        result=again,
        upload=ContentFile(b"kubectl describe quota: 0/4 used\n", name="quota.txt"),
        actor=evaluation["bob"],
    )
    probes.probe_ingest_bundle(project=alpha, candidate=volcano, bundle=bundle(), actor=None)
    _token, raw = api_token_create(
        project=alpha, name="ci", scopes=["read"], actor=evaluation["alice"]
    )
    cluster_services.cluster_save(
        project=alpha,
        data=cluster_services.ClusterData(
            name="lab", kind="ssh", candidate=volcano, hosts="127.0.0.5", ssh_user="probe"
        ),
        secrets={"ssh_password": "s3cret"},
        actor=evaluation["alice"],
    )
    from reports.procurement.services import LineData, ModelData, cost_line_add, cost_model_save

    cost_model_save(
        project=alpha, data=ModelData(baseline_label="today", fte_cost=1000), actor=None
    )
    cost_line_add(
        candidate=None,
        project=alpha,
        data=LineData("operations", "fte", "Hand-run operations", 2, 3, 4),
        actor=None,
    )
    sheet = rendered(evaluation)
    approve_all(evaluation, sheet)
    from reports import services

    sealed = services.sheet_seal(sheet_id=sheet.pk)
    assert sealed is not None and sealed.status == "sealed", sealed and sealed.error
    return {**evaluation, "token": raw}


def _lose_everything() -> None:
    """The database lost every project (and what hangs off them) and the stored files."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # checks pending in the test's transaction
        cursor.execute("TRUNCATE evaluations_project CASCADE")
    shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)


def test_a_project_comes_back_whole(full_project: dict[str, Any]) -> None:
    from reports.procurement.models import CostLine, CostModel

    alpha = full_project["alpha"]
    history = _history(alpha)
    events = list(
        ProjectEvent.objects.filter(project=alpha)
        .order_by("seq")
        .values_list("seq", "verb", "hash")
    )
    evidence = sorted(Evidence.objects.filter(project=alpha).values_list("sha256", flat=True))
    outputs = sorted(
        ProbeOutput.objects.filter(run__project=alpha).values_list("sha256", flat=True)
    )
    sealed_sha = Sheet.objects.get(project=alpha).sealed_sha256
    archive = archive_bytes(alpha)

    _lose_everything()
    User.objects.filter(username="procurement-lead").delete()  # someone left meanwhile
    assert not Project.objects.exists()

    report = import_project(io.BytesIO(archive))
    restored = report.project
    assert restored.slug == "alpha" and report.users_created == ["procurement-lead"]
    assert _history(restored) == history
    assert (
        list(
            ProjectEvent.objects.filter(project=restored)
            .order_by("seq")
            .values_list("seq", "verb", "hash")
        )
        == events
    )
    assert audit_chain_break(restored) is None
    assert AuditHead.objects.get(project=restored).seq == events[-1][0]
    restored_evidence = Evidence.objects.filter(project=restored)
    assert sorted(restored_evidence.values_list("sha256", flat=True)) == evidence
    for item in restored_evidence.exclude(file=""):
        assert default_storage.open(item.file.name).read()  # the bytes are back
    assert (
        sorted(ProbeOutput.objects.filter(run__project=restored).values_list("sha256", flat=True))
        == outputs
    )
    sheet = Sheet.objects.get(project=restored)
    # The history's head printed on the sealed sheet comes back with it and still holds.
    assert sheet.audit_seq and sheet.audit_hash == events[sheet.audit_seq - 1][2]
    verified = StringIO()
    call_command("verify_audit", "alpha", stdout=verified)
    assert verified.getvalue() == "alpha: intact\n"
    data = sheet.sealed_pdf.read()
    check = verify_pdf(data)
    assert check.valid, check.problems
    assert check.matches_sealed_file is True and sheet.sealed_sha256 == sealed_sha
    # The baseline's cost lines (no candidate) come back with the project.
    (baseline,) = CostLine.objects.filter(project=restored)
    assert baseline.candidate is None and baseline.expected == 3
    assert CostModel.objects.get(project=restored).baseline_label == "today"
    # Cluster credentials do not travel; the cluster and its hosts do.
    (cluster,) = Cluster.objects.filter(project=restored)
    assert cluster.secrets == "" and cluster.hosts == "127.0.0.5"
    # The project's API token still works.
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {full_project['token']}")
    assert client.get("/api/v1/projects/alpha/").status_code == 200


def test_restoring_beside_the_original_under_another_slug(full_project) -> None:
    archive = archive_bytes(full_project["alpha"])
    report = import_project(io.BytesIO(archive), slug="alpha-copy")
    assert report.project.slug == "alpha-copy" and report.tokens_skipped == 1
    assert ApiToken.objects.filter(project=report.project).count() == 0
    assert _history(report.project) == _history(full_project["alpha"])
    assert audit_chain_break(report.project) is None


def test_an_archive_written_before_tokens_moved_restores(full_project) -> None:
    # Archives written when API tokens were poc's name them "poc.apitoken" in data.json and
    # "poc.ApiToken" in the manifest's counts.
    def as_before(name: str, data: bytes) -> bytes:
        if name == "data.json":
            assert b'"evaluations.apitoken"' in data
            return data.replace(b'"evaluations.apitoken"', b'"poc.apitoken"')
        if name == "manifest.json":
            return data.replace(b'"evaluations.ApiToken"', b'"poc.ApiToken"')
        return data

    old = _rewritten(archive_bytes(full_project["alpha"]), as_before)
    _lose_everything()
    report = import_project(io.BytesIO(old))
    assert report.tokens_skipped == 0
    token = ApiToken.objects.get(project=report.project)
    assert api_token_find(full_project["token"]) == token


def test_an_archive_written_before_gpu_evidence_had_its_own_app_restores(full_project) -> None:
    # Archives written when clusters and probe runs were poc's name them "poc.cluster",
    # "poc.proberun", ... in data.json and "poc.Cluster", ... in the manifest's counts.
    moved = ["Cluster", "ProbeRun", "ProbeNode", "ProbeOutput", "ProbeBinding"]
    alpha = full_project["alpha"]
    before = {
        name: model.objects.filter(**{lookup: alpha}).count()
        for name, model, lookup in _probe_rows()
    }
    assert before["Cluster"] and before["ProbeRun"] and before["ProbeOutput"]

    def as_before(name: str, data: bytes) -> bytes:
        for model in moved:
            label = model.lower() if name == "data.json" else model
            data = data.replace(f'"probes.{label}"'.encode(), f'"poc.{label}"'.encode())
        if name in ("data.json", "manifest.json"):
            assert b'"probes.' not in data
        return data

    old = _rewritten(archive_bytes(alpha), as_before)
    _lose_everything()
    report = import_project(io.BytesIO(old))
    after = {
        name: model.objects.filter(**{lookup: report.project}).count()
        for name, model, lookup in _probe_rows()
    }
    assert after == before
    assert all(report.counts.get(f"probes.{name}", 0) == before[name] for name in moved)


def _probe_rows() -> list[tuple[str, Any, str]]:
    return [
        ("Cluster", Cluster, "project"),
        ("ProbeRun", ProbeRun, "project"),
        ("ProbeNode", ProbeNode, "run__project"),
        ("ProbeOutput", ProbeOutput, "run__project"),
        ("ProbeBinding", ProbeBinding, "project"),
    ]


def _rewritten(archive: bytes, change: Any) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as source, zipfile.ZipFile(out, "w") as target:
        for entry in source.infolist():
            data = change(entry.filename, source.read(entry.filename))
            if data is not None:
                target.writestr(entry.filename, data)
    return out.getvalue()


def test_a_damaged_or_clashing_archive_restores_nothing(full_project) -> None:
    archive = archive_bytes(full_project["alpha"])
    evidence_name = next(
        name for name in zipfile.ZipFile(io.BytesIO(archive)).namelist() if "evidence/" in name
    )
    projects, files_before = Project.objects.count(), _stored_files()

    def flip(name: str, data: bytes) -> bytes:
        return data[:-1] + bytes([data[-1] ^ 1]) if name == evidence_name else data

    cases = [
        (_rewritten(archive, flip), "does not match its SHA-256"),
        (archive, "exists here already"),
        (b"not a zip", "not a zip archive"),
        (_rewritten(archive, lambda n, d: None if n == "manifest.json" else d), "no manifest"),
        (
            _rewritten(
                archive,
                lambda n, d: (
                    d.replace(b'"volcano"', b'"no-such-solution"') if n == "manifest.json" else d
                ),
            ),
            "no solution 'no-such-solution'",
        ),
        (
            _rewritten(archive, lambda n, d: b"{}" if n == "data.json" else d),
            "data.json is not a list of rows",
        ),
    ]
    for data, message in cases:
        slug = None if message == "exists here already" else "restored"
        with pytest.raises(ArchiveError, match=message):
            import_project(io.BytesIO(data), slug=slug)
        assert Project.objects.count() == projects
        assert _stored_files() == files_before


def test_a_history_keyed_elsewhere_needs_that_key(full_project, settings) -> None:
    """An archive names the key ids its history was keyed with; another instance restores it
    only holding that key (after its own current one), and refuses a same-named other key."""
    from workbench.keyring import new_key_text

    archive = archive_bytes(full_project["alpha"])
    exporting = settings.WORKBENCH_AUDIT_KEYS  # the key id h1 (tests/conftest.py)
    assert json.loads(zipfile.ZipFile(io.BytesIO(archive)).read("manifest.json"))[
        "history_key_ids"
    ] == ["h1"]
    projects, files_before = Project.objects.count(), _stored_files()
    settings.WORKBENCH_AUDIT_KEYS = new_key_text("other")
    with pytest.raises(ArchiveError, match="key id\\(s\\) h1, which WORKBENCH_AUDIT_KEYS here"):
        import_project(io.BytesIO(archive), slug="elsewhere")
    settings.WORKBENCH_AUDIT_KEYS = new_key_text("h1")  # the same id, other bytes
    with pytest.raises(ArchiveError, match="does not verify here at entry 1"):
        import_project(io.BytesIO(archive), slug="elsewhere")
    assert Project.objects.count() == projects and _stored_files() == files_before
    settings.WORKBENCH_AUDIT_KEYS = f"{new_key_text('other')},{exporting}"
    restored = import_project(io.BytesIO(archive), slug="elsewhere").project
    assert audit_chain_break(restored) is None


def test_verify_audit_reads_the_anchor_printed_in_the_sealed_file(full_project) -> None:
    """The anchor stored beside a sealed sheet is held to the one its signed file prints."""
    sheet = Sheet.objects.get(project=full_project["alpha"])
    call_command("verify_audit", "alpha", stdout=StringIO())
    Sheet.objects.filter(pk=sheet.pk).update(audit_hash="0" * 64)
    out = StringIO()
    with pytest.raises(CommandError, match="1 project history chain"):
        call_command("verify_audit", "alpha", stdout=out)
    assert "not the one printed in its signed file" in out.getvalue()
    with pytest.raises(CommandError):  # the stored anchor alone no longer matches the chain
        call_command("verify_audit", "alpha", "--skip-files", stdout=StringIO())


def _stored_files() -> set[str]:
    root = Path(settings.MEDIA_ROOT)
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_the_commands(full_project, tmp_path: Path) -> None:
    out = tmp_path / "alpha.zip"
    call_command("export_project", "alpha", str(out), stdout=StringIO())
    manifest = json.loads(zipfile.ZipFile(out).read("manifest.json"))
    assert manifest["project"] == "alpha" and manifest["counts"]["poc.Result"] >= 4
    assert any("credentials" in line for line in manifest["left_out"])
    with pytest.raises(CommandError, match="exists already"):
        call_command("export_project", "alpha", str(out), stdout=StringIO())
    with pytest.raises(CommandError, match="no such project"):
        call_command("export_project", "nope", str(tmp_path / "x.zip"), stdout=StringIO())
    printed = StringIO()
    call_command("import_project", str(out), "--slug", "alpha-2", stdout=printed)
    assert "alpha-2:" in printed.getvalue() and "give them again" in printed.getvalue()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_project", str(out), stdout=StringIO())
