import os
import shutil
from collections.abc import Iterator

import pytest

CHROMIUM = (
    os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
)


@pytest.fixture(scope="session", autouse=True)
def _allow_orm_beside_playwright() -> Iterator[None]:
    # Playwright's sync API runs an event loop in this thread for the whole session; Django's
    # ORM calls from test bodies and database teardown are still synchronous and safe here.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    if not CHROMIUM:
        pytest.exit("browser tests need Chromium: apt-get install chromium", returncode=3)
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ],
    }


@pytest.fixture
def logged_in_page(page, live_server, personas):
    """A Chromium page logged in as bob (ops, member of project alpha) through the login form."""
    from django.contrib.auth import get_user_model

    bob = get_user_model().objects.get(username="bob")
    bob.set_password("browser-pass-1")
    bob.save()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "bob")
    page.fill("#id_password", "browser-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/projects/")
    return page
