"""The browser half of the access matrix (docs/security.md section 1) where no other test held
it: observers on every project page, staff and superusers who are no members, HTMX requests of
anonymous visitors, observers' sign-off, project admins' downloads, the verification page for
every kind of user, bearer tokens on HTML pages, the CI client download, and the Django admin.
Every refused request is checked to have written nothing."""

import io
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from reports.models import SignOff
from tests.access_matrix_helpers import (
    POST_ONLY,
    add_signers,
    make_p12,
    post_data,
    project_objects,
    project_routes,
    route_url,
    sealed_sheet,
    signing_settings,
    staff_users,
    stored_state,
)
from tests.poc.api_helpers import token_client
from tests.urlwalk import iter_routes

pytestmark = pytest.mark.django_db

# Pages an observer may open but whose form only writers may use: 403 even to read.
WRITER_FORMS = {
    "evaluations:candidate_add",
    "evaluations:action_add",
    "poc:cluster_new",
    "poc:cluster_edit",
    "poc:tokens",  # project admins only
    "evaluations:people_lookup",  # project admins only
    "procurement:terms_edit",  # procurement, business and project admins only
    "procurement:confirmation_edit",
    "procurement:cost_model_edit",
    "procurement:cost_line_add",
    "procurement:baseline_line_add",
    "procurement:cost_lines_import",
    "procurement:compatibility_claim",
}
# Pages that only show something: a POST is answered as a GET (200) and writes nothing.
READ_ONLY_PAGES = {
    "evaluations:project_detail",
    "evaluations:project_history",
    "evaluations:suite_export",
    "evaluations:template_list",
    "poc:matrix",
    "poc:results",
    "poc:actions",
    "poc:evidence_download",
    "poc:comparison",
    "poc:comparison_list",
    "poc:integration_gaps",
    "poc:responsibilities",
    "poc:runs",
    "poc:run_detail",
    "poc:probes",
    "poc:probe_agent",
    "poc:probe_checks",
    "poc:probe_run",
    "poc:clusters",
    "poc:cluster",
    "poc:probe_output",
    "procurement:terms",
    "procurement:term_history",
    "procurement:to_confirm",
    "procurement:costs",
    "procurement:cost_cheapest",
    "procurement:cost_lines_template",
    "procurement:compatibility",
    "reports:progress",
    "reports:sheet_pdf",
    "reports:export",
    "reports:sheet_export",
}
# POST-only routes whose method is checked (require_POST) before membership: a GET is 405
# for anyone signed in, member or not. The evaluations ones check membership first.
METHOD_FIRST = {name for name in POST_ONLY if not name.startswith("evaluations:")}
HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def _media(settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def objects(suite: dict[str, Any]) -> dict[str, Any]:
    return project_objects(suite)


def _walk(client: Any, objects: dict[str, Any], expect: Any) -> list[str]:
    """GET, GET with `HX-Request` and POST on every project route; the answers that differ
    from `expect(route_name, method)`, and any route after which something was written."""
    wrong = []
    for route in project_routes():
        url = route_url(route, objects)
        before = stored_state()
        answers = {
            "GET": client.get(url).status_code,
            "HX-GET": client.get(url, headers=HTMX).status_code,
            "POST": client.post(url, post_data(objects["sheet"].sha256)).status_code,
        }
        for method, status in answers.items():
            if status != expect(route.name, method):
                wrong.append(f"{method} {route.name}: {status}, not {expect(route.name, method)}")
        if stored_state() != before:
            wrong.append(f"{route.name}: something was written")
    return wrong


def test_the_walk_covers_every_app_and_every_listed_route_exists() -> None:
    names = {r.name for r in project_routes()}
    assert {"evaluations:project_detail", "poc:cell", "reports:sheet"} <= names
    assert names >= (WRITER_FORMS | READ_ONLY_PAGES | POST_ONLY)


# --- project pages, HTMX partials: observer ---------------------------------------------------


def test_observers_read_every_page_and_partial_and_every_write_is_refused(
    suite, objects, login
) -> None:
    """dave observes alpha: GET (with and without `HX-Request`) is 200 except writers' forms
    (403) and POST-only routes (405); every POST to a route that writes is 403; nothing is
    written anywhere."""

    def expect(name: str, method: str) -> int:
        if method == "POST":
            return 200 if name in READ_ONLY_PAGES else 403
        if name in POST_ONLY:
            return 405
        return 403 if name in WRITER_FORMS else 200

    assert _walk(login(suite["dave"]), objects, expect) == []


# --- project pages, HTMX partials, downloads, sign-off, cluster pages: staff -----------------


@pytest.mark.parametrize("who", ["staff", "superuser"])
def test_staff_and_superusers_who_are_no_members_get_404_on_every_project_route(
    suite, objects, login, who
) -> None:
    """Django's staff and superuser flags give no project access: 404 for GET, HTMX GET and
    POST on every project route (pages, partials, evidence download, exports, sheet PDF,
    sign-off form, cluster pages), nothing written. A GET of a POST-only route whose method is
    checked first is 405, as for any signed-in user."""

    def expect(name: str, method: str) -> int:
        return 405 if method != "POST" and name in METHOD_FIRST else 404

    assert _walk(login(staff_users()[who]), objects, expect) == []


def test_the_superuser_flag_adds_nothing_to_a_membership(suite, login) -> None:
    """A superuser who observes alpha reads it and is refused writes, as any observer."""
    from evaluations.services import membership_set

    root = staff_users()["superuser"]
    membership_set(project=suite["alpha"], user=root, role="observer", actor=None)
    client = login(root)
    detail = reverse("evaluations:project_detail", kwargs={"slug": "alpha"})
    assert client.get(detail).status_code == 200
    before = stored_state()
    update = reverse(
        "evaluations:candidate_update", kwargs={"slug": "alpha", "candidate_slug": "volcano"}
    )
    assert client.post(update, {"tier": "alternative"}).status_code == 403
    generate = reverse("reports:sheets", kwargs={"slug": "alpha"})
    assert client.post(generate, {"language": "en"}).status_code == 403
    assert client.get(reverse("poc:tokens", kwargs={"slug": "alpha"})).status_code == 403
    assert stored_state() == before


# --- HTMX partials: anonymous ------------------------------------------------------------------

PUBLIC = {
    "login",
    "logout",
    "set_language",
    "healthz",
    "readyz",
    "metrics",
    "ci_client_download",
    "probe_agent_download",
    "api_schema",
    "api_docs",
}
SAMPLE = {"SlugConverter": "alpha", "IntConverter": "1", "StringConverter": "x"}


def _login_routes() -> list:
    return [
        r
        for r in iter_routes()
        if r.name
        and r.name not in PUBLIC
        and not r.pattern.startswith(("admin/", "i18n/", "api/", "accounts/oidc/"))
    ]


def test_anonymous_htmx_requests_are_sent_to_login_like_pages(client, suite) -> None:
    """An htmx request without a session gets the same 302 to the login page as a full page
    (no 401, no fragment), GET and POST, on every route that needs a login."""
    before = stored_state()
    wrong = []
    for route in _login_routes():
        url = reverse(route.name, kwargs={k: SAMPLE[c] for k, c in route.converters.items()})
        for method in ("get", "post"):
            response = getattr(client, method)(url, headers=HTMX)
            if route.name == "home":
                ok = response.status_code == 302
            else:
                ok = response.status_code == 302 and response["Location"].startswith(
                    reverse("login")
                )
            if not ok:
                wrong.append(f"{method} {url}: {response.status_code}")
    assert wrong == []
    assert stored_state() == before


# --- sheet sign-off: observer ------------------------------------------------------------------


def test_observers_cannot_sign_off_in_the_browser(suite, objects, login) -> None:
    """A signing role dave does not hold: 403; the observer role he holds signs nothing: 422
    naming the role. No decision is stored."""
    sheet = objects["sheet"]
    url = reverse("reports:sheet", kwargs={"slug": "alpha", "revision": sheet.revision})
    client = login(suite["dave"])
    form = {"decision": "approve", "sheet_sha256": sheet.sha256, "comment": "observer"}
    before = stored_state()
    assert client.post(url, {**form, "role": "ops"}).status_code == 403
    refused = client.post(url, {**form, "role": "observer"})
    assert refused.status_code == 422
    assert "does not sign this sheet" in refused.content.decode()
    assert stored_state() == before and not SignOff.objects.exists()


# --- evidence download, exports, sheet PDF: project admin --------------------------------------


def test_project_admins_download_evidence_exports_and_the_sheet_pdf(suite, objects, login) -> None:
    client = login(suite["alice"])
    urls = [
        reverse(
            "poc:evidence_download", kwargs={"slug": "alpha", "evidence_id": objects["evidence_id"]}
        ),
        reverse("reports:sheet_pdf", kwargs={"slug": "alpha", "revision": 1}),
    ]
    for fmt in ("csv", "xlsx"):
        urls.append(
            reverse("reports:export", kwargs={"slug": "alpha", "table": "matrix", "fmt": fmt})
        )
        urls.append(
            reverse(
                "reports:sheet_export",
                kwargs={"slug": "alpha", "revision": 1, "table": "matrix", "fmt": fmt},
            )
        )
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Disposition"].startswith("attachment;"), url


# --- verification page: observer, project admin, staff, superuser -----------------------------


def test_the_verification_page_compares_stored_revisions_for_members_only(
    suite, login, settings, tmp_path
) -> None:
    """Every signed-in user may verify a file (200). Observers and project admins are members:
    the stored revision is compared; staff and superusers who are no members are told
    "not checked", as any non-member."""
    signing_settings(settings, tmp_path, make_p12(tmp_path))
    sealed = sealed_sheet(add_signers(suite)).sealed_pdf.read()
    people = staff_users()
    compared = "Matches the stored snapshot</dt><dd>yes"
    not_checked = "Matches the stored snapshot</dt><dd>not checked"
    before = stored_state()
    for user, expected in (
        (suite["dave"], compared),
        (suite["alice"], compared),
        (people["staff"], not_checked),
        (people["superuser"], not_checked),
    ):
        client = login(user)
        assert client.get(reverse("reports:verify")).status_code == 200
        page = client.post(reverse("reports:verify"), {"file": io.BytesIO(sealed)})
        assert page.status_code == 200
        html = page.content.decode()
        assert "Signature intact</dt><dd>yes" in html and expected in html, user.username
    assert stored_state() == before


# --- a bearer token on an HTML page ------------------------------------------------------------


def test_a_bearer_token_on_an_html_page_is_not_a_session(suite, objects, client) -> None:
    """Browser routes read the session only: a valid project token (every scope) is an
    anonymous visitor there, sent to the login page for GET, htmx and POST; nothing written."""
    _api, _token, raw = token_client(
        suite["alpha"], scopes=("read", "results:write", "probes:write")
    )
    bearer = {"Authorization": f"Bearer {raw}"}
    assert (
        client.get("/api/v1/projects/alpha/", headers=bearer).status_code == 200
    )  # the token works where tokens belong
    before = stored_state()
    urls = [
        reverse("evaluations:project_detail", kwargs={"slug": "alpha"}),
        reverse("poc:matrix", kwargs={"slug": "alpha"}),
        reverse(
            "poc:evidence_download", kwargs={"slug": "alpha", "evidence_id": objects["evidence_id"]}
        ),
        reverse("reports:sheet_pdf", kwargs={"slug": "alpha", "revision": 1}),
        reverse("reports:verify"),
    ]
    writes = [
        reverse(
            "evaluations:candidate_update", kwargs={"slug": "alpha", "candidate_slug": "volcano"}
        ),
        reverse("reports:sheets", kwargs={"slug": "alpha"}),
        reverse("poc:cluster_run", kwargs={"slug": "alpha", "cluster_id": objects["cluster_id"]}),
    ]
    for url in urls:
        for headers in (bearer, {**bearer, **HTMX}):
            response = client.get(url, headers=headers)
            assert response.status_code == 302, url
            assert response["Location"].startswith(reverse("login")), url
    for url in writes:
        response = client.post(url, post_data(objects["sheet"].sha256), headers=bearer)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert stored_state() == before


# --- public downloads and /metrics --------------------------------------------------------------


def test_the_ci_client_is_an_anonymous_download(client) -> None:
    from workbench import ci_client

    response = client.get("/ci/workbench-ci.py")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="workbench-ci.py"'
    assert response["Content-Type"].startswith("text/x-python")
    assert response.content == Path(ci_client.__file__).read_bytes()


def test_a_project_api_token_is_no_metrics_token(client, suite, settings) -> None:
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]  # not the test client's 127.0.0.1
    settings.METRICS_TOKEN = "s3cret-scrape-token"
    _api, _token, raw = token_client(suite["alpha"], scopes=("read", "results:write"))
    assert client.get("/metrics", headers={"Authorization": f"Bearer {raw}"}).status_code == 403
    ok = client.get("/metrics", headers={"Authorization": "Bearer s3cret-scrape-token"})
    assert ok.status_code == 200


# --- /admin/ -------------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["anonymous", "charlie", "dave", "bob", "alice"])
def test_admin_sends_everyone_without_the_staff_flag_to_its_login(client, suite, who) -> None:
    """Anonymous visitors, non-members, observers, members and project admins (none of them
    staff) are sent to the admin's own login page, for the index and for project data; a POST
    changes nothing."""
    from evaluations.models import Project

    if who != "anonymous":
        client.force_login(suite[who])
    before = stored_state()
    for url in ("/admin/", "/admin/evaluations/project/", "/admin/evaluations/project/add/"):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/?next="), url
    change = f"/admin/evaluations/project/{suite['alpha'].pk}/change/"
    refused = client.post(change, {"name": "Renamed", "slug": "alpha"})
    assert refused.status_code == 302 and refused["Location"].startswith("/admin/login/")
    assert stored_state() == before
    assert Project.objects.get(slug="alpha").name == "Alpha"


def test_staff_without_permissions_see_the_admin_index_and_no_project_data(client, suite) -> None:
    from evaluations.models import Project

    client.force_login(staff_users()["staff"])
    before = stored_state()
    assert client.get("/admin/").status_code == 200
    for url in (
        "/admin/evaluations/project/",
        "/admin/evaluations/project/add/",
        "/admin/poc/result/",
    ):
        assert client.get(url).status_code == 403, url
    change = f"/admin/evaluations/project/{suite['alpha'].pk}/change/"
    assert client.get(change).status_code == 403
    assert client.post(change, {"name": "Renamed", "slug": "alpha"}).status_code == 403
    assert stored_state() == before
    assert Project.objects.get(slug="alpha").name == "Alpha"


def test_superusers_open_the_admin_and_read_project_data(client, suite) -> None:
    client.force_login(staff_users()["superuser"])
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/evaluations/project/").status_code == 200
    change = client.get(f"/admin/evaluations/project/{suite['alpha'].pk}/change/")
    assert change.status_code == 200 and 'name="_save"' not in change.content.decode()
