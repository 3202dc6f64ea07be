"""Rendering helpers for the results matrix, where thousands of cells must render fast."""

from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from evaluations.models import Scenario
from poc.models import (
    Outcome,
)
from poc.probes.models import (
    Verdict,
)
from workbench.markdown import render_markdown

register = template.Library()

ICONS = {
    "passed": "✓",
    "failed": "✗",
    "not_covered": "○",
    "needs_integration": "⚙",
}


def outcome_label(outcome: str) -> str:
    return str(Outcome(outcome).label)


_LABELS: dict[str, dict[str, str]] = {}
_SCENARIO_LABELS: dict[str, dict[str, str]] = {}


def _scenario_labels() -> dict[str, str]:
    language = get_language() or ""
    labels = _SCENARIO_LABELS.get(language)
    if labels is None:
        labels = {value: escape(str(label)) for value, label in Scenario.choices}
        _SCENARIO_LABELS[language] = labels
    return labels


def _labels() -> dict[str, str]:
    """Escaped outcome words in the active language, computed once per language: a large
    matrix has thousands of cells, and a translation lookup per cell adds up."""
    language = get_language() or ""
    labels = _LABELS.get(language)
    if labels is None:
        labels = {o.value: escape(str(o.label)) for o in Outcome}
        _LABELS[language] = labels
    return labels


@register.simple_tag
def outcome_badge(outcome: str) -> SafeString:
    """Colour, icon and word together, never colour alone."""
    return mark_safe(  # noqa: S308 - built from fixed icons and an escaped label
        f'<span class="outcome o-{outcome}"><span aria-hidden="true">{ICONS[outcome]}'
        f"</span> {escape(outcome_label(outcome))}</span>"
    )


@register.simple_tag(takes_context=True)
def matrix_row(context: Any, row: Any) -> SafeString:
    """One matrix row: the action's header cell, then each candidate's cell as a focusable
    link that opens the cell panel.

    Built in one Python call per row rather than template tags per cell: the largest
    matrices have thousands of cells.
    """
    labels = _labels()
    action = row.action
    key = escape(action.key)
    text = action.question_text
    question = text if len(text) <= 110 else text[:109] + "…"
    parts = [
        f'<th scope="row" class="action-col"><code>{key}</code> '
        f'<span class="muted small">{_scenario_labels()[action.scenario]}</span>'
        f'<div class="q">{escape(question)}</div></th>'
    ]
    after_freeze, after_freeze_word = _after_freeze_mark(context)
    evidence_word = escape(_("evidence"))
    untried = escape(_("no result yet"))
    for candidate, state in row.cells:
        name = escape(candidate.solution.name)
        # Relative to the matrix page (the panel opens through matrix.js's one listener).
        url = f"cell/{candidate.slug}/{action.pk}/"
        if state is None:
            # Nobody has recorded anything: not the same as a result saying "not covered".
            parts.append(
                f'<td id="cell-{candidate.slug}-{action.pk}" class="cell o-not_covered untried">'
                f'<a href="{url}" data-cell aria-label="{name} · {key}: {untried}">'
                f'<span aria-hidden="true">·</span> {untried}</a></td>'
            )
            continue
        outcome = state.outcome
        extra = spoken = ""
        if state.evidence_count:
            # A mark the shipped fonts draw (an emoji needs an emoji font), and its words.
            extra = f'<span class="ev" title="{evidence_word}">◈{state.evidence_count}</span>'
            spoken = f" · {evidence_word} {state.evidence_count}"
        if state.after_freeze:
            extra += after_freeze
            spoken += f" ({after_freeze_word})"
        parts.append(
            f'<td id="cell-{candidate.slug}-{action.pk}" class="cell o-{outcome}">'
            f'<a href="{url}" data-cell '
            f'aria-label="{name} · {key}: {labels[outcome]}{spoken}">'
            f'<span aria-hidden="true">{ICONS[outcome]}</span> {labels[outcome]}{extra}</a></td>'
        )
    return mark_safe("".join(parts))  # noqa: S308 - slugs, ids and escaped text only


@register.simple_tag
def side_by_side_row(row: Any) -> SafeString:
    """One action row of the side-by-side comparison: its question, then each candidate's
    outcome (colour, icon and word) with its failure cause or what to integrate. One Python
    call per row, as for the matrix: a page holds thousands of cells."""
    labels = _labels()
    label = row.label if len(row.label) <= 120 else row.label[:119] + "…"
    differs = (
        f' <span class="visually-hidden">{escape(_("(candidates differ)"))}</span>'
        if row.differs
        else ""
    )
    key = escape(row.key)
    parts = [f'<th scope="row">{escape(label)} <code class="small">{key}</code>{differs}</th>']
    for cell in row.cells:
        detail = cell.detail if len(cell.detail) <= 140 else cell.detail[:139] + "…"
        parts.append(
            f'<td><span class="outcome o-{cell.outcome}"><span aria-hidden="true">'
            f"{ICONS[cell.outcome]}</span> {labels[cell.outcome]}</span>"
            + (f'<div class="small">{escape(detail)}</div>' if detail else "")
            + "</td>"
        )
    return mark_safe("".join(parts))  # noqa: S308 - fixed markup and escaped text only


def _after_freeze_mark(context: Any) -> tuple[str, str]:
    """The mark (and its words) of a cell whose latest result came after the revision the
    project is frozen for; built once per matrix, empty when the project is not frozen."""
    project = context.get("project")
    revision = getattr(project, "frozen_revision", None)
    if revision is None:
        return "", ""
    title = escape(_("Recorded after the freeze: not in r%(revision)s") % {"revision": revision})
    word = escape(_("after r%(revision)s") % {"revision": revision})
    return f' <span class="after-freeze" title="{title}">❄ {word}</span>', word


@register.filter
def markdown(text: str) -> SafeString:
    return render_markdown(text)


VERDICT_ICONS = {"healthy": "✓", "degraded": "!", "failed": "✗"}
VERDICT_CLASSES = {"healthy": "o-passed", "degraded": "o-needs_integration", "failed": "o-failed"}


@register.simple_tag
def verdict_badge(verdict: str) -> SafeString:
    """A GPU or node health verdict: colour, icon and word together."""
    if verdict not in VERDICT_ICONS:
        return mark_safe('<span class="outcome o-not_covered">—</span>')  # noqa: S308
    return mark_safe(  # noqa: S308 - fixed icons and classes, an escaped label
        f'<span class="outcome {VERDICT_CLASSES[verdict]}"><span aria-hidden="true">'
        f"{VERDICT_ICONS[verdict]}</span> {escape(str(Verdict(verdict).label))}</span>"
    )


@register.simple_tag
def run_status_badge(run: Any) -> SafeString:
    """A probe run: its health verdict when it finished with nodes read, else its status."""
    if run.status in ("done", "partial") and run.verdict:
        badge = verdict_badge(run.verdict)
        if run.status == "partial":
            badge = mark_safe(  # noqa: S308 - a fixed class and an escaped label
                f'{badge} <span class="badge flag">{escape(str(run.get_status_display()))}</span>'
            )
        return badge
    css = "flag" if run.status in ("failed", "timed_out", "cancelled") else ""
    return mark_safe(  # noqa: S308 - a fixed class and an escaped label
        f'<span class="badge {css}">{escape(str(run.get_status_display()))}</span>'
    )


@register.filter
def pretty_json(value: Any) -> str:
    import json

    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@register.filter
def secret_shown(summary: str) -> str:
    """A stored secret's summary in the reader's language (never its length)."""
    from poc.probes.present import secret_summary_shown

    return secret_summary_shown(summary)
