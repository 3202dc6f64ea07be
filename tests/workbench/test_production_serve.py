"""What the production image does, done here: collect static files with the Dockerfile's own
command, start gunicorn with production variables, and fetch pages and their static files the
way a browser behind a TLS proxy would. Readiness must catch what liveness cannot: a missing
manifest answers 500 on every page while the process is alive."""

import os
import re
import shlex
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.sshd import free_port
from tests.workbench.test_settings_env import PRODUCTION_ENV, VARIABLES

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).parent / "gunicorn"
PROXY = {"X-Forwarded-Proto": "https", "Host": "workbench.example.com"}


def dockerfile_collectstatic() -> tuple[dict[str, str], list[str]]:
    """The variables and arguments of the Dockerfile's collectstatic command."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    command = next(c for c in re.split(r"&&|\n", text) if "collectstatic" in c)
    words = shlex.split(command)
    start = words.index("python")
    env = dict(w.split("=", 1) for w in words[:start] if "=" in w)
    return env, words[start + 1 :]


@pytest.fixture
def production(tmp_path: Path) -> dict[str, str]:
    from reports.signing import create_self_signed_p12

    create_self_signed_p12(tmp_path / "org.p12", "pass-phrase")
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env.update(PRODUCTION_ENV)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "workbench.settings",
            "WORKBENCH_VAR_DIR": str(tmp_path / "var"),
            "STATIC_ROOT": str(tmp_path / "static"),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "CELERY_BROKER_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
            "ALLOWED_HOSTS": "workbench.example.com",
            "USE_X_FORWARDED_PROTO": "true",
            "SHEET_SIGNING_P12": str(tmp_path / "org.p12"),
            "SHEET_SIGNING_PASSPHRASE": "pass-phrase",
        }
    )
    return env


@contextmanager
def gunicorn(env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [str(GUNICORN), "workbench.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()[0]
            try:
                urllib.request.urlopen(url + "/healthz/", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


OPENER = urllib.request.build_opener(_NoRedirects)


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with OPENER.open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """STATIC_ROOT as the image builds it: the Dockerfile's command, with only the variables
    that command sets (no certificate, no credentials keys, no database at build time)."""
    build_env, args = dockerfile_collectstatic()
    assert build_env["DJANGO_ENV"] == "production" and args[:2] == ["manage.py", "collectstatic"]
    root = tmp_path_factory.mktemp("image") / "static"
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env.update(
        {**build_env, "STATIC_ROOT": str(root), "DJANGO_SETTINGS_MODULE": "workbench.settings"}
    )
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return root


def test_the_image_collects_static_files_in_production_mode(collected: Path) -> None:
    manifest = (collected / "staticfiles.json").read_text()
    assert re.search(r'"css/workbench.css": "css/workbench\.[0-9a-f]{12}\.css"', manifest)
    assert '"vendor/swagger-ui/swagger-ui.css.map"' in manifest


def test_gunicorn_serves_pages_and_static_files_and_says_when_it_cannot(
    production, collected
) -> None:
    # Before collectstatic: alive, not ready, and the reason named; every page would fail.
    with gunicorn({**production, "METRICS_TOKEN": "scrape-token-0"}) as url:
        assert fetch(url + "/healthz/")[0] == 200
        status, _headers, body = fetch(url + "/readyz/", {"Authorization": "Bearer scrape-token-0"})
        assert status == 503
        assert b'"name": "static_files", "ok": false' in body
        assert b"css/workbench.css" in body
        assert b'"name": "database", "ok": true' in body
        assert b'"name": "signing_certificate", "ok": true' in body
        status, _headers, body = fetch(url + "/accounts/login/", PROXY)
        # The error page itself renders without the manifest, quickly, with its way on.
        assert status == 500 and b"Something went wrong" in body

    served = {**production, "STATIC_ROOT": str(collected), "METRICS_TOKEN": "scrape-token-1"}
    with gunicorn(served) as url:
        # Metrics: production allows no address by default, only the token.
        assert fetch(url + "/metrics")[0] == 403
        status, _headers, text = fetch(url + "/metrics", {"Authorization": "Bearer scrape-token-1"})
        assert status == 200 and b"workbench_http_requests_total" in text
        status, _headers, body = fetch(url + "/readyz/")
        assert status == 200, body
        assert body.count(b'"ok": true') == 6 and b'"ok": false' not in body
        # Plain HTTP without the proxy's header is sent to HTTPS; probes are not.
        assert fetch(url + "/accounts/login/", {"Host": PROXY["Host"]})[0] == 301
        assert fetch(url + "/accounts/login/")[0] == 400  # and an unknown host is refused
        status, headers, page = fetch(url + "/accounts/login/", PROXY)
        assert status == 200, page[-2000:]
        assert "Strict-Transport-Security" in headers
        links = re.findall(rb'(?:href|src)="(/static/[^"]+)"', page)
        assert any(re.fullmatch(rb"/static/css/workbench\.[0-9a-f]{12}\.css", x) for x in links)
        for link in links:
            status, headers, content = fetch(url + link.decode(), PROXY)
            assert status == 200 and content, link
            assert "immutable" in headers.get("Cache-Control", "")
        css = next(x for x in links if x.endswith(b".css"))
        assert fetch(url + css.decode(), PROXY)[1]["Content-Type"].startswith("text/css")
        # The API documentation's assets, whose style sheet names a source map, are there too.
        status, _headers, docs = fetch(url + "/api/docs/", PROXY)
        assert status == 200 and b"swagger-ui." in docs


def test_readiness_names_an_unreachable_broker(production) -> None:
    closed = free_port()
    served = {
        **production,
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{closed}/0",
        "METRICS_TOKEN": "scrape-token-2",
    }
    with gunicorn(served) as url:
        status, _headers, body = fetch(url + "/readyz/", {"Authorization": "Bearer scrape-token-2"})
        public_status, _headers, public = fetch(url + "/readyz/")
    assert status == 503
    assert re.search(rb'"name": "broker", "ok": false, "problem": "\w*(Error|Refused)', body)
    assert public_status == 503 and b'"name": "broker", "ok": false}' in public
