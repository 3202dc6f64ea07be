"""Every page of the demo reads in Chinese: a reader who chose 简体中文 meets no English that
the product wrote (a template string, a choice's label, a message), only what people and
machines stored (names, notes, keys, captured outputs) and the technical words that have no
Chinese of their own.

The test builds the demo, walks every page of its project that a link reaches (one visit per
path), and reads each page's text the way a browser shows it: without scripts, styles, code and
what the page marks as not for translation."""

import contextlib
import json
import re
from collections import deque
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import models
from django.test import Client

from evaluations.models import Project

pytestmark = pytest.mark.django_db

# Words that read the same in a Chinese page: products, units, formats, standards.
TECHNICAL = frozenset(
    """
    api apis ci cd cpu gpu gpus hbm mig nvlink nvswitch nvml cuda dcgm ecc xid sxid smi pcie ssh
    sshd http https url urls json yaml xml csv pdf pdfs junit html sha hmac id ids uuid
    kubernetes kubectl k8s helm slurm slurmrestd sbatch squeue sinfo scontrol volcano kai
    openshift nvidia dcgm-exporter prometheus grafana ldap oidc sso saml rest tls
    linux ubuntu debian rhel docker containerd podman pod pods namespace namespaces runai
    redhat amd intel spdx apache gpl mit bsd lgpl usd eur cny rmb tb gb mb kb
    gib mib tib tflops tops ms bf fp tf h100 h200 l40s a100 b200 gb200 hgx dgx sxm nvl
    finops focus
    """.split()  # noqa: SIM905 - a list of words, read as one
)
SKIPPED_TAGS = {"script", "style", "code", "pre", "kbd", "samp", "svg", "textarea", "template"}
ENGLISH_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[a-z][A-Za-z'’-]*")
MAX_PAGES = 120
QUERY_PARAMETER = re.compile(r"\?[a-z_]+=\S*")


class PageText(HTMLParser):
    """The text a reader sees, and the links of the page."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.links: list[str] = []
        self.skipping: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and values.get("href"):
            self.links.append(values["href"] or "")
        if tag in SKIPPED_TAGS or values.get("translate") == "no":
            self.skipping.append(tag)
        for name in ("title", "aria-label", "placeholder", "alt"):
            if values.get(name) and not self.skipping:
                self.texts.append(values[name] or "")

    def handle_endtag(self, tag: str) -> None:
        if self.skipping and self.skipping[-1] == tag:
            self.skipping.pop()

    def handle_data(self, data: str) -> None:
        if not self.skipping and data.strip():
            self.texts.append(" ".join(data.split()))


class Stored:
    """What the database holds: whole values (notes, reasons, names; a page may show a note
    cut short) and the words of short values (names, keys, versions: a page may show them in a
    sentence of its own). A text on a page found there was stored, not written by the product."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self.words: set[str] = set()
        for model in apps.get_models():
            fields = [
                f
                for f in model._meta.concrete_fields
                if isinstance(f, models.CharField | models.TextField | models.JSONField)
            ]
            if not fields:
                continue
            rows = model._default_manager.values_list(*(f.name for f in fields))
            for row in rows:
                for field, value in zip(fields, row, strict=True):
                    if isinstance(value, str) and value[:1] in "[{":
                        with contextlib.suppress(ValueError):
                            value = json.loads(value)
                    self.add(value, short=isinstance(field, models.CharField))
        self.blob = "\n".join(self.values)

    def add(self, value: Any, short: bool) -> None:
        if isinstance(value, str):
            text = " ".join(value.split())
            self.values.append(text)
            if short or len(text) <= 60:
                self.words |= set(ENGLISH_WORD.findall(text))
        elif isinstance(value, dict):
            for item in value.values():
                self.add(item, short)
        elif isinstance(value, list):
            for item in value:
                self.add(item, short)


def english_left(text: str, stored: Stored) -> list[str]:
    """The English words of a text that are neither stored nor technical. A page may join
    stored texts with its own punctuation (": note", "what · team · days") and show query
    parameters (`?start=YYYY-MM-DD`): each part is read apart."""
    left = []
    for part in re.split(r"\s+·\s+", QUERY_PARAMETER.sub(" ", text)):
        whole = part.strip(" :：").rstrip("….")
        if whole in stored.values or len(whole.split()) >= 3 and whole in stored.blob:
            continue
        left += [
            word
            for word in ENGLISH_WORD.findall(whole)
            if word.lower().strip("'’-") not in TECHNICAL and word not in stored.words
        ]
    return left


def walk(client: Client, start: str) -> dict[str, list[str]]:
    """Each page below the project a link reaches -> the English left on it."""
    stored = Stored()
    prefix = urlsplit(start).path
    seen = {prefix}
    queue = deque([start])
    found: dict[str, list[str]] = {}
    shapes: dict[str, int] = {}
    while queue and len(seen) <= MAX_PAGES:
        url = queue.popleft()
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        if not response["Content-Type"].startswith("text/html"):
            continue
        page = PageText()
        page.feed(response.content.decode())
        left = sorted({w for text in page.texts for w in english_left(text, stored)})
        if left:
            found[url] = left
        for href in page.links:
            target = urlsplit(urljoin(url, href))
            path = target.path
            if target.netloc or not path.startswith(prefix) or path in seen:
                continue
            shape = re.sub(r"/\d+/", "/N/", path)  # two pages of each kind are enough
            shapes[shape] = shapes.get(shape, 0) + 1
            if shapes[shape] > 2:
                continue
            if re.search(r"\.(pdf|csv|xlsx|json|zip|txt|xml|log)$|/download/|/export", path):
                continue
            seen.add(path)
            queue.append(path + (f"?{target.query}" if target.query else ""))
    return found


def test_the_demo_pages_show_no_english_to_a_chinese_reader(finished: Project) -> None:
    client = Client()
    client.force_login(User.objects.get(username="platform"))
    client.cookies["django_language"] = "zh-hans"
    found = walk(client, f"/projects/{finished.slug}/")
    assert len(found) == 0, "\n".join(f"{url}: {' '.join(words)}" for url, words in found.items())


def test_the_check_finds_a_label_left_in_english() -> None:
    stored = Stored.__new__(Stored)
    stored.values, stored.words = [], set()
    stored.add("Queue capability refused the 9th GPU", short=False)
    stored.add("volcano", short=True)
    stored.blob = "\n".join(stored.values)
    assert english_left("Deployment", stored) == ["Deployment"]
    assert english_left("部署：Deployment of volcano", stored) == ["Deployment", "of"]
    assert english_left("Queue capability refused the 9th GPU", stored) == []
    assert english_left("GPU 与 MIG", stored) == []
    page = PageText()
    page.feed('<p>通过</p><code>result.recorded</code><span translate="no">runai</span>')
    assert page.texts == ["通过"]
