"""The frozen content of a procurement sheet: a canonical JSON document and its sha256.

The snapshot holds no clock reading of its own, so building it again for an unchanged project
gives the same bytes: a sheet whose hash no longer matches is stale. It holds only what the
sheet shows: moving the project to its review phase, say, leaves open revisions signable.
"""

import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import models
from django.utils import timezone, translation

from evaluations.models import (
    REQUIRED_SCENARIOS,
    AcceptanceAction,
    Candidate,
    Dimension,
    Project,
    Scenario,
    TeamRole,
)
from poc import selectors as poc_selectors
from poc.models import (
    Delivery,
    Evidence,
    Outcome,
    ResponsibilityArea,
    ResultCell,
)
from poc.probes import present
from poc.probes import selectors as probe_selectors
from reports.procurement import selectors as procurement_selectors
from reports.procurement.frozen import frozen_costs
from reports.procurement.selectors.compatibility import frozen_matrix
from reports.procurement.selectors.delivery import day_rates, delivery_split
from reports.procurement.selectors.subjects import other_open_items

# 2: questions and product names beside keys; 3: terms, costs, what is to be confirmed;
# 4: each action's importance and owning team, cells with no result, carried evidence, the
# recommendation's review-by date and reopening conditions; 5: capacity, the baseline, cost per
# GPU-hour used, break-even, the tornado's widest inputs, the share of draws each is cheapest,
# lines still to be confirmed, the support and compatibility matrix; 6: each cost line as entered
# and the cost model's inputs the chosen candidates' figures rest on.
FORMAT = "workbench-sheet/6"
AREAS = ResponsibilityArea.values
CENT = Decimal("0.01")


def _label(choices: type[models.TextChoices], value: str) -> str:
    """A choice's label in the active language, as get_FOO_display() gives it, without
    hashing a lazy label for every row (a third of a large snapshot's time went there)."""
    language = translation.get_language()
    labels = _LABELS.get((choices, language))
    if labels is None:
        labels = _LABELS[(choices, language)] = {v: str(label) for v, label in choices.choices}
    return labels.get(value, value)


_LABELS: dict[tuple[type[models.TextChoices], str | None], dict[str, str]] = {}


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build_snapshot(
    project: Project, *, language: str, candidate_slugs: list[str]
) -> dict[str, Any]:
    """Everything the sheet shows, in plain data, for the chosen candidates (all if none)."""
    return _build(project, language, _read(project, candidate_slugs))


@dataclass
class _Read:
    """The rows a snapshot is made of that read the same in every language: a revision's
    snapshot and its fingerprint (the same in FINGERPRINT_LANGUAGE) share one reading."""

    summaries: list[poc_selectors.CandidateSummary]
    actions: list[AcceptanceAction]
    outcomes: dict[tuple[int, int], str]
    shortlist: list[Candidate]
    evidence: list[tuple[Any, ...]]

    @property
    def chosen(self) -> list[Candidate]:
        return [s.candidate for s in self.summaries]


def _read(project: Project, candidate_slugs: list[str]) -> _Read:
    summaries = poc_selectors.comparison_for_project(project, include_all=True)
    if candidate_slugs:
        summaries = [s for s in summaries if s.candidate.slug in candidate_slugs]
    chosen = [s.candidate for s in summaries]
    actions = list(
        AcceptanceAction.objects.filter(project=project)
        .select_related("requirement")
        .order_by(
            "requirement__dimension", "requirement__position", "requirement__pk", "position", "pk"
        )
    )
    outcomes = {
        (c, a): o
        for c, a, o in ResultCell.objects.filter(project=project, candidate__in=chosen).values_list(
            "candidate_id", "action_id", "outcome"
        )
    }
    shortlist = list(
        Candidate.objects.filter(project=project)
        .select_related("solution")
        .order_by("position", "pk")
    )
    # The evidence of the results this revision freezes (each cell's latest), not every file
    # ever posted: nightly CI runs would otherwise multiply the index.
    frozen_results = ResultCell.objects.filter(project=project, candidate__in=chosen).values(
        "result_id"
    )
    # Plain values, not model instances: a large project freezes tens of thousands of items.
    evidence = list(
        Evidence.objects.filter(project=project, result_id__in=frozen_results)
        .order_by("uploaded_at", "pk")
        .values_list(
            "result__candidate__slug",
            "result__action__key",
            "result__action_id",
            "name",
            "kind",
            "sha256",
            "size",
            "url",
            "uploaded_by__username",
            "uploaded_at",
            "carried_from__result_id",
            "superseded",
        )
        .iterator(chunk_size=2000)
    )
    return _Read(summaries, actions, outcomes, shortlist, evidence)


def _build(project: Project, language: str, read: _Read) -> dict[str, Any]:
    with translation.override(language):
        return _labelled(project, language, read)


def _labelled(project: Project, language: str, read: _Read) -> dict[str, Any]:
    summaries, actions, outcomes, shortlist = (
        read.summaries,
        read.actions,
        read.outcomes,
        read.shortlist,
    )
    chosen = read.chosen
    terms = procurement_selectors.terms_frozen(chosen)
    questions = {a.pk: a.question_text for a in actions}
    # Cells nobody has recorded anything for, told apart from a deliberate "not covered".
    tried: dict[int, int] = {c.pk: 0 for c in chosen}
    for c, _a in outcomes:
        tried[c] += 1
    untried = {pk: len(actions) - count for pk, count in tried.items()}
    rates = day_rates(project)
    product_names = {c.slug: c.solution.name for c in chosen}
    return {
        "format": FORMAT,
        "language": language,
        "project": {
            "slug": project.slug,
            "name": project.name,
            "description": project.description,
            "workloads": project.get_workloads_display(),
            "existing_base": str(project.get_existing_base_display()),
            "layer_needed": str(project.get_layer_needed_display()),
            "supplier_needs": project.get_supplier_needs_display(),
        },
        "shortlist": [
            {
                "slug": c.slug,
                "solution": c.solution.name,
                "version": c.version,
                "tier": c.tier,
                "tier_label": str(c.get_tier_display()),
                "step": str(c.get_decided_by_step_display()),
                "reason": c.reason,
            }
            for c in shortlist
        ],
        "recommendation": {
            "candidates": [
                f"{c.solution.name} {c.version}".strip()
                for slug in project.recommended
                for c in shortlist
                if c.slug == slug
            ],
            "conditions": project.recommendation_conditions,
            "reason": project.recommendation_reason,
            # When it is to be reviewed again, and what else reopens it (reports.review).
            "review_by": project.review_by.isoformat() if project.review_by else None,
            "reopen_when": project.reopen_when.splitlines(),
        },
        "scenario_coverage": _scenario_coverage(actions, chosen, outcomes),
        "candidates": [
            _candidate(s, terms[s.candidate.slug], untried[s.candidate.pk], rates)
            for s in summaries
        ],
        "to_confirm": _to_confirm(project, chosen),
        "costs": frozen_costs(project, chosen),
        "compatibility": frozen_matrix(project, chosen),
        "matrix": {
            "actions": [
                {
                    "key": a.key,
                    "question": a.question_text,
                    "requirement": a.requirement.feature_text,
                    "dimension": _label(Dimension, a.requirement.dimension),
                    "importance": a.requirement.importance,
                    "owner_team": _label(TeamRole, a.requirement.owner_team),
                    "scenario": _label(Scenario, a.scenario),
                }
                for a in actions
            ],
            "columns": [c.slug for c in chosen],
            "column_names": [f"{c.solution.name} {c.version}".strip() for c in chosen],
            "rows": [
                [outcomes.get((c.pk, a.pk), Outcome.NOT_COVERED) for c in chosen] for a in actions
            ],
        },
        "evidence": [
            {
                "candidate": candidate,
                "candidate_name": product_names[candidate],
                "action": action,
                "question": questions[action_id],
                "name": name,
                "kind": kind,
                "sha256": sha256,
                "size": size,
                "url": url,
                "recorded_by": username or "",
                "recorded_at": uploaded_at.isoformat(),
                # Evidence a person recorded on an earlier result of the cell, repeated on the
                # automated result frozen here (poc.services.carry): from which result, and
                # whether that result superseded it.
                **({"carried_from_result": carried_from} if carried_from else {}),
                **({"superseded": True} if superseded else {}),
            }
            for (
                candidate,
                action,
                action_id,
                name,
                kind,
                sha256,
                size,
                url,
                username,
                uploaded_at,
                carried_from,
                superseded,
            ) in read.evidence
        ],
        "probe_facts": _probe_facts(project, chosen),
    }


def _scenario_coverage(
    actions: list[AcceptanceAction],
    chosen: list[Candidate],
    outcomes: dict[tuple[int, int], str],
) -> dict[str, Any]:
    """For each candidate and each of the four scenario kinds every suite must hold: how many
    of its actions have a result, and how many passed or failed."""
    labels = dict(Scenario.choices)
    columns = []
    for scenario in REQUIRED_SCENARIOS:
        kind = [a for a in actions if a.scenario == scenario]
        columns.append((scenario, kind))
    return {
        "scenarios": [str(labels[s]) for s, _kind in columns],
        "candidates": [
            {
                "name": f"{c.solution.name} {c.version}".strip(),
                "cells": [
                    {
                        "total": len(kind),
                        "covered": sum(
                            outcomes.get((c.pk, a.pk), Outcome.NOT_COVERED) != Outcome.NOT_COVERED
                            for a in kind
                        ),
                        "passed": sum(outcomes.get((c.pk, a.pk)) == Outcome.PASSED for a in kind),
                        "failed": sum(outcomes.get((c.pk, a.pk)) == Outcome.FAILED for a in kind),
                    }
                    for _scenario, kind in columns
                ],
            }
            for c in chosen
        ],
    }


def _to_confirm(project: Project, chosen: list[Candidate]) -> list[dict[str, Any]]:
    """What is still to be confirmed for the chosen candidates, with who chases it."""
    return [
        {
            "slug": item.candidate.slug,
            "candidate": item.candidate.solution.name,
            "group": item.cell.term.group_label,
            "term": str(item.cell.term.label),
            "value": item.cell.display,
            "owner": " · ".join(
                part
                for part in (
                    str(item.chase.get_owner_team_display()) if item.chase else "",
                    item.chase.owner.get_username() if item.chase and item.chase.owner else "",
                )
                if part
            ),
            "due": item.chase.due.isoformat() if item.chase and item.chase.due else None,
            "request": item.chase.request if item.chase else "",
        }
        for item in procurement_selectors.open_items(project, chosen)
        if not item.cell.expired  # judged against the sheet's date where it is printed
    ] + [
        {
            "slug": item.candidate.slug,
            "candidate": item.candidate.solution.name,
            "group": item.group,
            "term": item.what,
            "value": item.stated,
            "owner": _chaser(item.chase),
            "due": item.chase.due.isoformat() if item.chase and item.chase.due else None,
            "request": item.chase.request if item.chase else "",
        }
        for item in other_open_items(project, chosen, timezone.localdate())
    ]


def _chaser(chase: Any) -> str:
    if chase is None:
        return ""
    return " · ".join(
        part
        for part in (
            str(chase.get_owner_team_display()),
            chase.owner.get_username() if chase.owner else "",
        )
        if part
    )


def _probe_facts(project: Project, chosen: list[Candidate]) -> list[dict[str, Any]]:
    """Each chosen candidate's latest probe run, in shortlist order."""
    latest = probe_selectors.latest_probe_runs(project, chosen)
    return [present.sheet_probe_facts(latest[c.pk]) for c in chosen if c.pk in latest]


def _candidate(
    summary: poc_selectors.CandidateSummary,
    terms: list[Any],
    untried: int,
    rates: dict[str, Decimal],
) -> dict[str, Any]:
    c = summary.candidate
    return {
        "slug": c.slug,
        "untried": untried,
        "solution": c.solution.name,
        "version": c.version,
        "tier_label": str(c.get_tier_display()),
        "counts": summary.counts,
        "failed": [
            {
                "action": cell.action.key,
                "question": cell.action.question_text,
                "importance": cell.action.requirement.importance,
                "cause": cell.result.failure_cause,
            }
            for cell in summary.failed
        ],
        "not_covered": [
            {"action": a.key, "question": a.question_text} for a in summary.not_covered
        ],
        "needs_integration": [
            {
                "action": cell.action.key,
                "question": cell.action.question_text,
                "what": cell.result.integration_what,
                "owner_team": _label(TeamRole, cell.result.integration_owner_team),
                "effort_days": str(cell.result.integration_effort_days or Decimal(0)),
                "delivery": _label(Delivery, cell.result.integration_delivery),
                "delivered_by": cell.result.integration_delivered_by,
            }
            for cell in summary.needs_integration
        ],
        "delivery": delivery_split(
            summary.needs_integration, summary.responsibilities.values(), rates
        ),
        "integration_total_days": str(summary.integration_effort),
        "effort_by_team": _effort_by_team(summary),
        "responsibilities": [
            {
                "area": str(r.get_area_display()),
                "party": str(r.get_party_display()),
                "delivery": _label(Delivery, r.delivery),
                "person": r.person,
                "escalation": r.escalation,
            }
            for r in sorted(summary.responsibilities.values(), key=lambda r: AREAS.index(r.area))
        ],
        "gaps": [label for _value, label in summary.responsibility_gaps],
        "terms": terms,
    }


def _effort_by_team(summary: poc_selectors.CandidateSummary) -> list[dict[str, str]]:
    totals: dict[str, Decimal] = {}
    for cell in summary.needs_integration:
        team = _label(TeamRole, cell.result.integration_owner_team)
        totals[team] = totals.get(team, Decimal(0)) + (
            cell.result.integration_effort_days or Decimal(0)
        )
    return [{"team": team, "days": str(days)} for team, days in sorted(totals.items())]


def _hashed(project: Project, language: str, read: _Read) -> tuple[dict[str, Any], str, str]:
    text = canonical_json(_build(project, language, read))
    return json.loads(text), text, sha256_hex(text)


def snapshot_and_hash(
    project: Project, *, language: str, candidate_slugs: list[str]
) -> tuple[dict[str, Any], str, str]:
    return _hashed(project, language, _read(project, candidate_slugs))


# Labels in a snapshot are translated text, so a translation update would change a sheet's
# hash without changing anything it says. Whether a project has moved on since a revision is
# therefore judged on the same snapshot in the language of the source code.
FINGERPRINT_LANGUAGE = "en"


def snapshot_with_fingerprint(
    project: Project, *, language: str, candidate_slugs: list[str]
) -> tuple[dict[str, Any], str, str, str]:
    """A new revision's snapshot, its text and hash, and its fingerprint, from one reading of
    the project (the labels are made twice, the rows read once)."""
    read = _read(project, candidate_slugs)
    snapshot, text, digest = _hashed(project, language, read)
    if language == FINGERPRINT_LANGUAGE:
        return snapshot, text, digest, digest
    return (
        snapshot,
        text,
        digest,
        sha256_hex(canonical_json(_build(project, FINGERPRINT_LANGUAGE, read))),
    )


def content_fingerprint(project: Project, *, candidate_slugs: list[str]) -> str:
    """The sha256 of the snapshot in FINGERPRINT_LANGUAGE: what staleness compares."""
    return snapshot_and_hash(
        project, language=FINGERPRINT_LANGUAGE, candidate_slugs=candidate_slugs
    )[2]
