"""Every HTML page is served with a strict Content-Security-Policy, and no template holds an
inline script or event handler it would block."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = [
    p
    for p in ROOT.glob("**/templates/**/*.html")
    if ".venv" not in p.parts and "pdf" not in p.parts
]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/api/docs/", "/projects/", "/"])
def test_pages_carry_the_policy(path, personas, login) -> None:
    response = login(personas["alice"]).get(path, follow=True)
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if " " in d.strip())
    assert directives["script-src"] == "'self'"
    assert directives["default-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"


def test_the_api_docs_start_script_is_a_file() -> None:
    from django.test import Client

    page = Client().get("/api/docs/").content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page)


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_template_holds_inline_script_or_handlers(template: Path) -> None:
    text = template.read_text(encoding="utf-8")
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), "inline <script>"
    assert not re.search(r"\son[a-z]+\s*=\s*[\"']", text), "inline event handler"
    assert "hx-on" not in text and "javascript:" not in text
