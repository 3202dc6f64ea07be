"""Evidence files and links: hashes, limits, sanitised names, members-only downloads."""

import hashlib
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from poc import services
from poc.models import (
    Evidence,
    ResultCell,
)
from poc.services import detect_content_type, sanitize_filename
from poc.services import results as results_services

pytestmark = pytest.mark.django_db


@pytest.fixture
def result(suite):
    return services.result_record(
        candidate=suite["volcano"], action=suite["actions"][0], outcome="passed", actor=suite["bob"]
    )


def _upload(client, result, name, content, **extra):
    return client.post(
        reverse("poc:evidence_add", kwargs={"slug": "alpha", "result_id": result.pk}),
        {"file": SimpleUploadedFile(name, content), **extra},
        headers={"HX-Request": "true"},
    )


def _stored_files() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return [str(p) for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_upload_stores_hash_size_type_and_counts(suite, result, login) -> None:
    content = b"%PDF-1.7 fake report"
    response = _upload(login(suite["bob"]), result, "report.pdf", content)
    assert response.status_code == 200
    evidence = Evidence.objects.get()
    assert evidence.sha256 == hashlib.sha256(content).hexdigest()
    assert (evidence.size, evidence.content_type, evidence.name) == (
        len(content),
        "application/pdf",
        "report.pdf",
    )
    assert evidence.file.name.endswith(evidence.sha256)
    assert ResultCell.objects.get(result=result).evidence_count == 1


def test_oversized_upload_is_refused_and_nothing_is_stored(suite, result, login, settings) -> None:
    settings.EVIDENCE_MAX_BYTES = 1024
    response = _upload(login(suite["bob"]), result, "big.log", b"x" * 2048)
    assert response.status_code == 422
    assert "the limit is" in response.content.decode()
    assert not Evidence.objects.exists()
    assert _stored_files() == []


def test_empty_upload_is_refused(suite, result, login) -> None:
    response = _upload(login(suite["bob"]), result, "empty.log", b"")
    assert response.status_code == 422
    assert "empty" in response.content.decode()
    assert not Evidence.objects.exists()


def test_failed_write_leaves_no_orphan_file(suite, result, monkeypatch) -> None:
    def broken(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(results_services, "event_record", broken)
    with pytest.raises(RuntimeError):
        services.evidence_attach_file(
            result=result, upload=SimpleUploadedFile("a.log", b"abc"), actor=None
        )
    assert not Evidence.objects.exists()
    assert _stored_files() == []


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\me\\run.log", "run.log"),
        ("bad\x00na\x1bme\n.txt", "badname.txt"),
        ("...hidden", "hidden"),
        ("", "evidence"),
        ("训练日志.log", "训练日志.log"),
    ],
)
def test_filenames_are_sanitised(raw, clean) -> None:
    assert sanitize_filename(raw) == clean


def test_content_detection() -> None:
    assert detect_content_type(b"\x89PNG\r\n\x1a\nxxxx", "a.bin") == "image/png"
    assert detect_content_type(b"<!DOCTYPE html><script>", "a.txt") == "text/html"
    assert detect_content_type(b'{"a": 1}', "a.json") == "application/json"
    assert detect_content_type(b"plain words", "noext") == "text/plain"
    assert detect_content_type(b"\x00\x01\x02\xff", "x") == "application/octet-stream"


def test_download_is_members_only_and_always_an_attachment(suite, result, login, client) -> None:
    _upload(login(suite["bob"]), result, "page.html", b"<html><script>alert(1)</script></html>")
    evidence = Evidence.objects.get()
    url = reverse("poc:evidence_download", kwargs={"slug": "alpha", "evidence_id": evidence.pk})
    response = login(suite["dave"]).get(url)  # an observer is a member
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["Content-Type"] == "application/octet-stream"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert b"".join(response.streaming_content).startswith(b"<html>")
    assert login(suite["charlie"]).get(url).status_code == 404
    assert client.get(url).status_code == 302
    other = reverse("poc:evidence_download", kwargs={"slug": "beta", "evidence_id": evidence.pk})
    assert login(suite["charlie"]).get(other).status_code == 404


def test_links_must_be_http(suite, result, login) -> None:
    client = login(suite["bob"])
    url = reverse("poc:evidence_add", kwargs={"slug": "alpha", "result_id": result.pk})
    bad = client.post(url, {"url": "javascript:alert(1)"}, headers={"HX-Request": "true"})
    assert bad.status_code == 422
    good = client.post(
        url,
        {"url": "https://grafana.example/d/abc", "name": "Dashboard"},
        headers={"HX-Request": "true"},
    )
    assert good.status_code == 200
    link = Evidence.objects.get()
    assert (link.kind, link.name) == ("link", "Dashboard")


def test_evidence_of_another_project_is_404(suite, result, login) -> None:
    url = reverse("poc:evidence_add", kwargs={"slug": "beta", "result_id": result.pk})
    response = login(suite["charlie"]).post(url, {"file": SimpleUploadedFile("a.log", b"a")})
    assert response.status_code == 404
    assert not Evidence.objects.exists()


def test_an_upload_larger_than_any_limit_is_refused_before_it_is_read(suite, login) -> None:
    from poc.models import (
        Evidence,
    )

    client = login(suite["alice"])
    result = services.result_record(
        candidate=suite["volcano"], action=suite["actions"][0], outcome="passed", actor=None
    )
    size = 300 * 1024 * 1024  # over every limit (evidence 50 MB, API 20 MB, verify 100 MB)
    page = client.generic(
        "POST",
        reverse("poc:evidence_add", args=["alpha", result.pk]),
        b"--x\r\n",  # what would follow is never read
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(size),
    )
    assert page.status_code == 413
    assert "this upload is limited to 50 MB" in page.content.decode()
    api = client.generic(
        "POST",
        "/api/v1/projects/alpha/results/",
        b"{",
        content_type="application/json",
        CONTENT_LENGTH=str(size),
    )
    assert api.status_code == 413 and "300 MB" in api.json()["detail"]
    assert not Evidence.objects.exists()


def test_each_upload_route_refuses_past_its_own_limit_before_reading(suite, login) -> None:
    """A 60 MB evidence file is over the evidence limit though under the sheet-verify one: it is
    refused from its Content-Length (the body here is five bytes: nothing more is read)."""
    from poc.models import (
        Evidence,
    )

    client = login(suite["alice"])
    result = services.result_record(
        candidate=suite["volcano"], action=suite["actions"][0], outcome="passed", actor=None
    )
    sixty = str(60 * 1024 * 1024)
    for path in (
        reverse("poc:evidence_add", args=["alpha", result.pk]),
        f"/api/v1/results/{result.pk}/evidence/",
    ):
        response = client.generic(
            "POST",
            path,
            b"--x\r\n",
            content_type="multipart/form-data; boundary=x",
            CONTENT_LENGTH=sixty,
        )
        assert response.status_code == 413, path
        assert "limited to 50 MB" in response.content.decode(), path
    suite_import = client.generic(
        "POST",
        reverse("evaluations:suite_import", args=["alpha"]),
        b"--x\r\n",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(4 * 1024 * 1024),
    )
    assert suite_import.status_code == 413
    assert "limited to 2 MB" in suite_import.content.decode()
    # A JSON post to the results API over its 20 MB limit: refused, JSON.
    results = client.generic(
        "POST",
        "/api/v1/projects/alpha/results/",
        b"{",
        content_type="application/json",
        CONTENT_LENGTH=str(30 * 1024 * 1024),
    )
    assert results.status_code == 413 and "limited to 20 MB" in results.json()["detail"]
    assert not Evidence.objects.exists()


def test_the_route_limits_follow_the_settings(settings) -> None:
    from workbench.middleware import FORM_ROOM_BYTES, body_limit

    settings.EVIDENCE_MAX_BYTES = 7 * 1024 * 1024
    assert body_limit("/projects/alpha/results/3/evidence/") == 7 * 1024 * 1024 + FORM_ROOM_BYTES
    assert body_limit("/api/v1/results/3/evidence/") == 7 * 1024 * 1024 + FORM_ROOM_BYTES
    assert body_limit("/sheets/verify/") == settings.SHEET_VERIFY_MAX_BYTES + FORM_ROOM_BYTES
    assert body_limit("/no/such/page/") == settings.API_MAX_BODY_BYTES + FORM_ROOM_BYTES


def test_a_result_and_its_evidence_are_recorded_in_one_step(suite, login, settings) -> None:
    """The result form takes a file (or a link) with the outcome: one post stores both, and a
    refused file stores neither."""
    from poc.models import (
        Result,
    )

    client = login(suite["bob"])
    quota, job = suite["actions"][0], suite["actions"][1]
    url = reverse("poc:cell", args=["alpha", "volcano", job.pk])
    log = SimpleUploadedFile("nccl.log", b"NCCL WARN timeout at step 40\n")
    saved = client.post(
        url,
        {"outcome": "failed", "failure_cause": "NCCL timeout", "evidence_file": log},
        headers={"HX-Request": "true"},
    )
    assert saved.status_code == 200, saved.content[:300]
    result = Result.objects.get(action=job)
    evidence = Evidence.objects.get()
    assert (evidence.result, evidence.name, evidence.kind) == (result, "nccl.log", "file")
    assert ResultCell.objects.get(action=job).evidence_count == 1
    assert "nccl.log" in saved.content.decode()
    # A link instead of a file.
    client.post(
        reverse("poc:cell", args=["alpha", "volcano", quota.pk]),
        {"outcome": "passed", "evidence_url": "https://grafana.example/d/quota"},
        headers={"HX-Request": "true"},
    )
    link = Evidence.objects.get(kind="link")
    assert link.result.action == quota and link.url == "https://grafana.example/d/quota"
    # Over the limit: the form says why, and neither the result nor the file is kept.
    settings.EVIDENCE_MAX_BYTES = 10
    before = (Result.objects.count(), Evidence.objects.count())
    files_before = sorted(Path(settings.MEDIA_ROOT).rglob("*"))
    refused = client.post(
        url,
        {
            "outcome": "passed",
            "change_reason": "rerun after the fix",
            "evidence_file": SimpleUploadedFile("big.log", b"x" * 100),
        },
        headers={"HX-Request": "true"},
    )
    assert refused.status_code == 422
    assert "the limit is" in refused.content.decode()
    assert (Result.objects.count(), Evidence.objects.count()) == before
    assert sorted(Path(settings.MEDIA_ROOT).rglob("*")) == files_before
    both = client.post(
        url,
        {
            "outcome": "passed",
            "change_reason": "x",
            "evidence_file": SimpleUploadedFile("a.log", b"a"),
            "evidence_url": "https://ci.example/1",
        },
        headers={"HX-Request": "true"},
    )
    assert both.status_code == 422 and "not both" in both.content.decode()
