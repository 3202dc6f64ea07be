"""The API half of the access matrix (docs/security.md section 1) where no other test held it:
sessions of non-members, observers and members on every endpoint family (writes with the CSRF
token a browser sends, and without it), tokens whose scopes lack `read` on every read, a
`read` token generating a sheet, sign-offs by anything but a member's session, and every kind
of token verifying a real sealed sheet. Every refused write is checked to have stored nothing."""

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from poc.models import (
    Evidence,
    Result,
    Run,
)
from poc.probes.models import (
    ProbeRun,
)
from reports.models import Sheet, SignOff
from tests.access_matrix_helpers import (
    add_signers,
    csrf_api_client,
    make_p12,
    project_objects,
    sealed_sheet,
    session_api_client,
    signing_settings,
    staff_users,
    stored_state,
)
from tests.poc.api_helpers import token_client

pytestmark = pytest.mark.django_db

ROW = {"candidate": "volcano", "action": "quota-hit", "outcome": "passed"}
JUNIT = (
    b'<testsuite name="poc" tests="1"><testcase classname="poc" name="test_quota">'
    b'<properties><property name="action" value="quota-hit"/></properties>'
    b"</testcase></testsuite>"
)


@pytest.fixture(autouse=True)
def _media(settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def objects(suite: dict[str, Any]) -> dict[str, Any]:
    return project_objects(suite)


def _read_urls(objects: dict[str, Any]) -> list[str]:
    """Every GET endpoint of alpha's data."""
    sheet = objects["sheet"].pk
    return [
        "/api/v1/projects/alpha/",
        "/api/v1/projects/alpha/candidates/",
        "/api/v1/projects/alpha/actions/",
        "/api/v1/projects/alpha/matrix/",
        f"/api/v1/runs/{objects['ci_run_id']}/",
        "/api/v1/projects/alpha/probes/",
        f"/api/v1/probes/{objects['probe'].pk}/",
        "/api/v1/projects/alpha/clusters/",
        "/api/v1/projects/alpha/sheets/",
        f"/api/v1/sheets/{sheet}/",
        f"/api/v1/sheets/{sheet}/pdf",
    ]


def _answers(client: APIClient, urls: list[str]) -> dict[str, int]:
    return {url: client.get(url).status_code for url in urls}


# --- reads ---------------------------------------------------------------------------------------


def test_sessions_read_every_endpoint_as_members_and_outsiders_get_404(suite, objects) -> None:
    """bob (member) and dave (observer) read every endpoint (200); charlie (no member of alpha)
    and a staff user who is no member get 404 on each, as for a project that does not exist."""
    urls = _read_urls(objects)
    for user, status in (
        (suite["bob"], 200),
        (suite["dave"], 200),
        (suite["charlie"], 404),
        (staff_users()["staff"], 404),
    ):
        answers = _answers(session_api_client(user), urls)
        assert answers == dict.fromkeys(urls, status), user.username


@pytest.mark.parametrize(
    ("scopes", "status"),
    [(("read",), 200), (("results:write",), 403), (("probes:write",), 403)],
)
def test_tokens_read_every_endpoint_only_with_the_read_scope(suite, objects, scopes, status):
    client, _token, _raw = token_client(suite["alpha"], scopes=scopes)
    urls = _read_urls(objects)
    assert _answers(client, urls) == dict.fromkeys(urls, status)
    if status == 403:
        assert "'read'" in client.get(urls[0]).json()["detail"]


def test_the_project_list_shows_each_caller_its_own_projects(suite) -> None:
    """Sessions list the projects they are members of (staff: none); a token lists its own
    project with the `read` scope, and is refused without it, as for one project."""

    def slugs(client: APIClient) -> list[str]:
        response = client.get("/api/v1/projects/")
        assert response.status_code == 200
        return [p["slug"] for p in response.json()]

    people = staff_users()
    assert slugs(session_api_client(suite["charlie"])) == ["beta"]
    assert slugs(session_api_client(suite["dave"])) == ["alpha"]
    assert slugs(session_api_client(suite["bob"])) == ["alpha"]
    assert slugs(session_api_client(suite["alice"])) == ["alpha"]
    assert slugs(session_api_client(people["staff"])) == []
    assert slugs(session_api_client(people["superuser"])) == []
    assert slugs(token_client(suite["alpha"], scopes=("read",))[0]) == ["alpha"]
    assert slugs(token_client(suite["beta"], scopes=("read", "probes:write"))[0]) == ["beta"]
    for scopes in (("results:write",), ("probes:write",)):
        refused = token_client(suite["alpha"], scopes=scopes)[0].get("/api/v1/projects/")
        assert refused.status_code == 403 and "'read'" in refused.json()["detail"]


# --- results, JUnit, evidence --------------------------------------------------------------------


def _post_results_junit_evidence(client: APIClient, result_id: int) -> list[int]:
    return [
        client.post(
            "/api/v1/projects/alpha/results/",
            json.dumps({"run": {"external_id": "session-1"}, "results": [ROW]}),
            content_type="application/json",
        ).status_code,
        client.post(
            "/api/v1/projects/alpha/junit/?candidate=volcano&run=session-2",
            JUNIT,
            content_type="application/xml",
        ).status_code,
        client.post(
            f"/api/v1/results/{result_id}/evidence/",
            {"file": io.BytesIO(b"log line\n")},
            format="multipart",
        ).status_code,
    ]


def _results_state() -> tuple:
    return Result.objects.count(), Run.objects.count(), Evidence.objects.count()


@pytest.fixture
def result(suite: dict[str, Any]) -> Result:
    from poc import services

    return services.result_record(
        candidate=suite["volcano"],
        action=suite["actions"][0],
        outcome="failed",
        failure_cause="first try",
        actor=None,
    )


@pytest.mark.parametrize(
    ("caller", "answers"),
    [
        ("session non-member with CSRF", [404, 404, 404]),
        ("session observer with CSRF", [403, 403, 403]),
        ("session member without CSRF", [403, 403, 403]),
        ("token read", [403, 403, 403]),
        ("token probes:write", [403, 403, 403]),
        ("token of beta", [404, 404, 404]),
    ],
)
def test_refused_results_junit_and_evidence_store_nothing(suite, result, caller, answers):
    """Results, JUnit, evidence: a non-member's session 404, an observer's 403, a member's
    session without the CSRF token 403, a `read` or `probes:write` token 403, beta's token
    404, JUnit included (its raw body is never parsed for a form token: the session's CSRF
    check reads the header)."""
    client = {
        "session non-member with CSRF": lambda: csrf_api_client(suite["charlie"]),
        "session observer with CSRF": lambda: csrf_api_client(suite["dave"]),
        "session member without CSRF": lambda: session_api_client(suite["bob"]),
        "token read": lambda: token_client(suite["alpha"], scopes=("read",))[0],
        "token probes:write": lambda: token_client(suite["alpha"], scopes=("probes:write",))[0],
        "token of beta": lambda: token_client(suite["beta"], scopes=("read", "results:write"))[0],
    }[caller]()
    before = (_results_state(), stored_state())
    assert _post_results_junit_evidence(client, result.pk) == answers
    assert (_results_state(), stored_state()) == before


def test_a_member_session_with_its_csrf_token_posts_results_junit_and_evidence(
    suite, result
) -> None:
    """bob's session with its CSRF token (header and cookie) stores results, a JUnit report
    and evidence (201 each), as a `results:write` token does; without the token it is 403."""
    results, runs, evidence = _results_state()
    answers = _post_results_junit_evidence(csrf_api_client(suite["bob"]), result.pk)
    assert answers == [201, 201, 201]
    assert Run.objects.filter(external_id="session-1").exists()
    session_run = Run.objects.get(external_id="session-2")
    assert session_run.imports.get().posted_by == suite["bob"]
    assert _results_state()[0] > results and _results_state()[2] == evidence + 1


# --- cluster runs --------------------------------------------------------------------------------


@pytest.fixture
def cluster(suite: dict[str, Any]) -> Any:
    from poc.probes.services import clusters as services

    return services.cluster_save(
        project=suite["alpha"],
        data=services.ClusterData(
            name="lab", kind="ssh", candidate=suite["volcano"], hosts="127.0.0.1:9", ssh_user="x"
        ),
        secrets={"ssh_password": "not-used"},
        actor=None,
    )


def test_cluster_runs_follow_membership_for_sessions(suite, cluster) -> None:
    """Non-member 404, observer 403, member without the CSRF token 403: nothing queued. A
    member with it queues the run (202)."""
    url = f"/api/v1/clusters/{cluster.pk}/runs/"
    before = stored_state()
    for client, status in (
        (csrf_api_client(suite["charlie"]), 404),
        (csrf_api_client(staff_users()["superuser"]), 404),
        (csrf_api_client(suite["dave"]), 403),
        (session_api_client(suite["bob"]), 403),
    ):
        assert client.post(url, {}, format="json").status_code == status
    assert stored_state() == before and not ProbeRun.objects.exists()
    queued = csrf_api_client(suite["bob"]).post(url, {}, format="json")
    assert queued.status_code == 202, queued.content
    run = ProbeRun.objects.get()
    assert run.cluster == cluster and run.created_by == suite["bob"] and run.token is None


# --- sheet generation ----------------------------------------------------------------------------


def test_sheet_generation_needs_a_writing_member_or_a_results_write_token(suite) -> None:
    """Non-member 404, observer 403, member without the CSRF token 403, tokens `read` or
    `probes:write` 403 naming `results:write`: no revision. A member with the CSRF token
    generates one (202), recorded as theirs."""
    url = "/api/v1/projects/alpha/sheets/"
    body = {"language": "en"}
    tokens = [
        token_client(suite["alpha"], scopes=scopes)[0]
        for scopes in (("read",), ("probes:write",), ("read", "probes:write"))
    ]
    sessions = (
        (csrf_api_client(suite["charlie"]), 404),
        (csrf_api_client(staff_users()["staff"]), 404),
        (csrf_api_client(suite["dave"]), 403),
        (session_api_client(suite["bob"]), 403),
    )
    before = stored_state()
    for client, status in sessions:
        assert client.post(url, body, format="json").status_code == status
    for client in tokens:
        refused = client.post(url, body, format="json")
        assert refused.status_code == 403 and "results:write" in refused.json()["detail"]
    assert stored_state() == before and not Sheet.objects.exists()
    # A person must say why a review that is not ready is frozen anyway (nothing is kept
    # without the reason), then it is theirs.
    refused = csrf_api_client(suite["bob"]).post(url, body, format="json")
    assert refused.status_code == 400 and "not ready" in refused.json()["detail"]
    assert not Sheet.objects.exists()
    made = csrf_api_client(suite["bob"]).post(
        url, {**body, "acknowledgement": "first look"}, format="json"
    )
    assert made.status_code == 202, made.content
    sheet = Sheet.objects.get()
    assert sheet.generated_by == suite["bob"] and sheet.generated_by_token is None


# --- sign-offs -----------------------------------------------------------------------------------


@pytest.fixture
def ready_sheet(suite: dict[str, Any]) -> Sheet:
    from django.core.files.base import ContentFile

    from reports import services
    from reports.models import SheetStatus

    sheet = services.sheet_generate(
        acknowledgement="known gaps", project=suite["alpha"], language="en", actor=None
    )
    sheet.pdf.save("alpha-r1.pdf", ContentFile(b"%PDF-1.7 stand-in"), save=False)
    sheet.status = SheetStatus.READY
    sheet.save()
    return sheet


def test_sign_offs_refuse_non_members_observers_and_every_token(suite, ready_sheet) -> None:
    """Signing takes a member's session only. Non-member (and staff non-member) 404; observer
    403 "no signing role", 403 for a role he does not hold, 409 for the observer role (it signs
    nothing); a token of any scope or project 403 (the endpoint reads no bearer token, so the
    caller is anonymous). Nothing is stored."""
    url = f"/api/v1/sheets/{ready_sheet.pk}/signoffs/"
    approve = {"decision": "approve", "sha256": ready_sheet.sha256}
    tokens = [
        token_client(suite["alpha"], scopes=(scope,))[0]
        for scope in ("read", "results:write", "probes:write")
    ]
    tokens.append(token_client(suite["beta"], scopes=("read", "results:write"))[0])
    staff = csrf_api_client(staff_users()["superuser"])
    before = stored_state()
    assert csrf_api_client(suite["charlie"]).post(url, approve, format="json").status_code == 404
    assert staff.post(url, approve, format="json").status_code == 404
    observer = csrf_api_client(suite["dave"])
    unnamed = observer.post(url, approve, format="json")
    assert unnamed.status_code == 403
    assert unnamed.json()["detail"] == "you hold no signing role in this project"
    assert observer.post(url, {**approve, "role": "ops"}, format="json").status_code == 403
    observer_role = observer.post(url, {**approve, "role": "observer"}, format="json")
    assert observer_role.status_code == 409
    assert "does not sign this sheet" in observer_role.json()["detail"]
    for client in tokens:
        refused = client.post(url, {**approve, "role": "ops"}, format="json")
        assert refused.status_code == 403
        assert "credentials were not provided" in refused.json()["detail"]
    assert stored_state() == before and not SignOff.objects.exists()


# --- sheet verification ---------------------------------------------------------------------


def test_every_caller_verifies_a_sealed_sheet_and_only_its_project_compares(
    suite, settings, tmp_path
) -> None:
    """A real sealed sheet of alpha, posted as the raw body: 200 and a valid signature for
    every caller. Alpha's token with `read` and its observer get the stored-revision
    comparison; alpha's tokens without `read` (they may post, not read), beta's token, a
    non-member's and a staff user's session get null ("not checked"). Nothing is written."""
    signing_settings(settings, tmp_path, make_p12(tmp_path))
    sealed = sealed_sheet(add_signers(suite)).sealed_pdf.read()
    people = staff_users()
    callers = {
        "token read": (token_client(suite["alpha"], scopes=("read",))[0], True),
        "token results:write": (token_client(suite["alpha"], scopes=("results:write",))[0], None),
        "token probes:write": (token_client(suite["alpha"], scopes=("probes:write",))[0], None),
        "token of beta": (token_client(suite["beta"], scopes=("read",))[0], None),
        "session observer": (session_api_client(suite["dave"]), True),
        "session non-member": (session_api_client(suite["charlie"]), None),
        "session staff": (session_api_client(people["staff"]), None),
    }
    before = stored_state()
    for name, (client, compared) in callers.items():
        response = client.post("/api/v1/sheets/verify/", sealed, content_type="application/pdf")
        assert response.status_code == 200, (name, response.content[:200])
        report = response.json()
        assert report["valid"] is True and report["intact"] is True, name
        assert report["matches_stored_snapshot"] is compared, name
        assert report["matches_sealed_file"] is compared, name
    assert stored_state() == before


# --- anonymous writes ------------------------------------------------------------------------


def test_anonymous_writes_are_refused_everywhere(suite, result, cluster, ready_sheet) -> None:
    """No credentials: 401 with `WWW-Authenticate: Bearer` on every write and on verify; 403 on
    sign-offs (that endpoint knows sessions only, so it has no challenge to send). Nothing is
    stored."""
    client = APIClient()
    posts = {
        "/api/v1/projects/alpha/results/": 401,
        "/api/v1/projects/alpha/junit/?candidate=volcano&run=x": 401,
        f"/api/v1/results/{result.pk}/evidence/": 401,
        "/api/v1/projects/alpha/probes/?candidate=volcano": 401,
        f"/api/v1/clusters/{cluster.pk}/runs/": 401,
        "/api/v1/projects/alpha/sheets/": 401,
        "/api/v1/sheets/verify/": 401,
        f"/api/v1/sheets/{ready_sheet.pk}/signoffs/": 403,
    }
    before = stored_state()
    for url, status in posts.items():
        response = client.post(url, {}, format="json")
        assert response.status_code == status, url
        assert response["Content-Type"].startswith("application/json"), url
        if status == 401:
            assert response["WWW-Authenticate"] == "Bearer", url
    assert stored_state() == before
