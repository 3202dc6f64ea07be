"""The upload form's help lists what the parsers read and the commands the agent runs on a node,
from the parsers' registry and the node commands' list: a format or command added there shows
here, and the outsider sees no form."""

from html import escape
from typing import Any

import pytest
from django.utils import translation

from poc.probes.parsers.formats import FORMATS
from poc.probes.parsers.node_commands import NODE_COMMANDS

pytestmark = pytest.mark.django_db


def _help(page: str) -> str:
    start = page.index('id="upload-formats"')
    return page[start : page.index("</details>", start)]


def test_the_help_lists_every_format_and_node_command(personas: dict[str, Any], login) -> None:
    page = login(personas["bob"]).get("/projects/alpha/probes/").content.decode()
    shown = _help(page)
    for entry in FORMATS:
        with translation.override("en"):
            assert f"<code>{entry.key}</code>" in shown
            assert escape(str(entry.name)) in shown and escape(str(entry.description)) in shown
    commands = shown[shown.index('<code class="wrap">') : shown.index("</code></pre>")]
    lines = commands.removeprefix('<code class="wrap">').splitlines()
    assert [line.split("   # ")[0] for line in lines] == [f"$ {c.shown}" for c in NODE_COMMANDS]
    assert "# only when asked for" in lines[-1]


def test_the_observer_and_the_outsider_get_no_upload_help(personas: dict[str, Any], login) -> None:
    observed = login(personas["dave"]).get("/projects/alpha/probes/")
    assert observed.status_code == 200 and "upload-formats" not in observed.content.decode()
    assert login(personas["charlie"]).get("/projects/alpha/probes/").status_code == 404
