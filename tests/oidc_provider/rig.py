"""Start the test provider (gunicorn on a free loopback port) and act as a person's browser at
its sign-in page.

`start_provider(folder, redirect_uri, users)` makes an RSA signing key, seeds the provider's
SQLite database (users, groups, the workbench's client) and serves it; `Provider.sign_in()`
follows the authorization request from the workbench through the provider's login form back to
the workbench's callback URL, with real HTTP; `Provider.set_groups()` changes a user's groups
at the provider, as its administrator would.
"""

import json
import os
import secrets
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

REPO = Path(__file__).resolve().parents[2]


class ProviderError(RuntimeError):
    """The provider could not be started or a sign-in did not go as a browser's would."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _CsrfField(HTMLParser):
    token = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "input" and values.get("name") == "csrfmiddlewaretoken":
            self.token = values.get("value") or ""


@dataclass
class Provider:
    issuer: str
    client_id: str
    client_secret: str
    folder: Path
    process: subprocess.Popen

    @property
    def log(self) -> str:
        path = self.folder / "gunicorn.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def sign_in(
        self,
        authorize_url: str,
        username: str,
        password: str,
        redirect_uri: str,
        browser: requests.Session | None = None,
    ) -> str:
        """Go from the authorization request to the redirect back to `redirect_uri`, signing in
        at the provider's login form on the way (unless `browser` holds a provider session
        already); returns that redirect (with code and state)."""
        browser = browser or self.browser()
        url = authorize_url
        for _ in range(6):
            if url.startswith(redirect_uri):
                return url
            answer = browser.get(url, allow_redirects=False, timeout=10)
            if answer.status_code in (301, 302, 303):
                url = urljoin(url, answer.headers["Location"])
                continue
            if answer.status_code == 200 and 'name="password"' in answer.text:
                form = _CsrfField()
                form.feed(answer.text)
                posted = browser.post(
                    url,
                    # The login page's own URL carries `next` (the authorization request).
                    data={
                        "csrfmiddlewaretoken": form.token,
                        "username": username,
                        "password": password,
                    },
                    headers={"Referer": url},
                    allow_redirects=False,
                    timeout=10,
                )
                if posted.status_code != 302:
                    raise ProviderError(f"the provider refused {username}: {posted.status_code}")
                url = urljoin(url, posted.headers["Location"])
                continue
            raise ProviderError(f"{url} answered {answer.status_code}: {answer.text[:500]}")
        raise ProviderError(f"no redirect back to {redirect_uri}")

    @staticmethod
    def browser() -> requests.Session:
        """A browser of its own for the provider's pages (its cookies: the provider session)."""
        session = requests.Session()
        session.trust_env = False
        return session

    def set_groups(self, username: str, groups: list[str]) -> None:
        """Give `username` exactly these groups at the provider (its database, directly)."""
        with sqlite3.connect(self.folder / "provider.sqlite3") as db:
            (user_id,) = db.execute(
                "SELECT id FROM auth_user WHERE username = ?", (username,)
            ).fetchone()
            db.execute("DELETE FROM auth_user_groups WHERE user_id = ?", (user_id,))
            for group in groups:
                db.execute("INSERT OR IGNORE INTO auth_group (name) VALUES (?)", (group,))
                (group_id,) = db.execute(
                    "SELECT id FROM auth_group WHERE name = ?", (group,)
                ).fetchone()
                db.execute(
                    "INSERT INTO auth_user_groups (user_id, group_id) VALUES (?, ?)",
                    (user_id, group_id),
                )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def start_provider(
    folder: Path, redirect_uri: str, users: dict[str, dict[str, object]]
) -> Provider:
    folder.mkdir(parents=True, exist_ok=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (folder / "signing.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    port = _free_port()
    issuer = f"http://127.0.0.1:{port}/o"
    client_id, client_secret = "workbench-test", secrets.token_urlsafe(24)
    (folder / "seed.json").write_text(
        json.dumps(
            {
                "client_id": client_id,
                "client_secret": client_secret,
                "redirect_uri": redirect_uri,
                # The login page the workbench names after a logout (Django's test client host).
                "post_logout_redirect_uri": redirect_uri.split("/accounts/")[0]
                + "/accounts/login/",
                "users": users,
            }
        )
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.oidc_provider.settings",
        "OIDC_PROVIDER_DIR": str(folder),
        "OIDC_PROVIDER_ISSUER": issuer,
    }
    seeded = subprocess.run(
        [sys.executable, "-m", "tests.oidc_provider.seed", str(folder / "seed.json")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if seeded.returncode != 0:
        raise ProviderError(f"seeding the provider failed: {seeded.stderr[-3000:]}")
    log = (folder / "gunicorn.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "tests.oidc_provider.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--threads",
            "4",
            "--timeout",
            "30",
        ],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    provider = Provider(issuer, client_id, client_secret, folder, process)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ProviderError(f"the provider exited: {provider.log}")
        try:
            answer = requests.get(
                issuer + "/.well-known/openid-configuration", timeout=1, proxies={}
            )
            if answer.status_code == 200:
                return provider
        except requests.RequestException:
            pass
        time.sleep(0.1)
    provider.stop()
    raise ProviderError(f"the provider did not answer in 30 s: {provider.log}")
