"""Notes are Markdown rendered through an allow-list: real XSS payloads come out harmless."""

import re

import pytest

from workbench.markdown import render_markdown

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg/onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<body onload=alert(1)>",
    "<iframe src=javascript:alert(1)></iframe>",
    '<a href="javascript:alert(1)">x</a>',
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    '<a href="&#106;avascript:alert(1)">x</a>',
    '<a href="java\tscript:alert(1)">x</a>',
    "[click](javascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![x](javascript:alert(1))",
    "<details open ontoggle=alert(1)>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    '<object data="javascript:alert(1)"></object>',
    '<embed src="javascript:alert(1)">',
    '<form action="javascript:alert(1)"><button>x</button></form>',
    "<input autofocus onfocus=alert(1)>",
    "<marquee onstart=alert(1)>",
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<base href="javascript:alert(1)//">',
    '<link rel=stylesheet href="javascript:alert(1)">',
    "<style>@import 'javascript:alert(1)';</style>",
    '<p onmouseover="alert(1)">hover</p>',
    "`<script>` inside code and <script>alert(1)</script>",
    "<<script>script>alert(1)<</script>/script>",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    '<a href="vbscript:msgbox(1)">x</a>',
]
DANGEROUS = re.compile(
    r"<\s*(script|iframe|object|embed|svg|math|style|form|input|meta|base|link|body|details|marquee)"
    r"|\son\w+\s*=|javascript:|vbscript:|data:text|style\s*=",
    re.IGNORECASE,
)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_is_neutralised(payload: str) -> None:
    html = str(render_markdown(payload))
    assert not DANGEROUS.search(html), html


def test_ordinary_markdown_survives() -> None:
    html = str(render_markdown("**bold** and [docs](https://example.com)\n\n- a\n- b\n\n`code`"))
    assert "<strong>bold</strong>" in html
    assert '<a href="https://example.com" rel="noopener noreferrer nofollow">docs</a>' in html
    assert "<li>a</li>" in html and "<code>code</code>" in html


def test_notes_render_sanitised_in_the_cell_panel(suite, login) -> None:
    from django.urls import reverse

    from poc import services

    services.result_record(
        candidate=suite["volcano"],
        action=suite["actions"][0],
        outcome="passed",
        note="**ok** <img src=x onerror=alert(1)>",
        actor=None,
    )
    url = reverse(
        "poc:cell",
        kwargs={"slug": "alpha", "candidate_slug": "volcano", "action_id": suite["actions"][0].pk},
    )
    body = login(suite["bob"]).get(url, headers={"HX-Request": "true"}).content.decode()
    assert "<strong>ok</strong>" in body
    assert "onerror" not in body
