"""When a sealed decision is due for another look.

A shortlist is a conclusion for the versions, environment and workloads it saw. The latest
sealed revision freezes the recommendation with a review-by date and the conditions people
listed; the workbench checks on its own what it can see against what that revision froze:

- the review-by date has come;
- a quote a term rests on has passed its valid-until date;
- a person recorded another version of a candidate;
- a probe run newer than the frozen one saw other GPU models, drivers or CUDA versions.

The conditions people listed stay a checklist. `decision_review` reads (no writes); the beat
task writes the notice to the signers once per sealed revision (reports.services.notices).
"""

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.models import Candidate, Project
from poc.probes import selectors as probe_selectors
from reports.models import Sheet, SheetStatus


@dataclass
class Review:
    sheet: Sheet  # the latest sealed revision
    review_by: date | None
    triggers: list[str] = field(default_factory=list)  # what the workbench saw, in words
    checklist: list[str] = field(default_factory=list)  # conditions people check

    @property
    def due(self) -> bool:
        return bool(self.triggers)


def latest_sealed(project: Project) -> Sheet | None:
    # The parsed snapshot is what is read; its canonical text copy (as large) stays behind.
    return (
        Sheet.objects.filter(project=project, status=SheetStatus.SEALED)
        .defer("snapshot_json")
        .order_by("-revision")
        .first()
    )


def decision_review(project: Project, *, today: date | None = None) -> Review | None:
    """What reopens the project's sealed decision now; None while nothing is sealed."""
    sheet = latest_sealed(project)
    if sheet is None:
        return None
    today = today or timezone.localdate()
    frozen: dict[str, Any] = sheet.snapshot
    recommendation = frozen.get("recommendation") or {}
    review_by = (
        date.fromisoformat(recommendation["review_by"]) if recommendation.get("review_by") else None
    )
    review = Review(sheet, review_by, checklist=list(recommendation.get("reopen_when") or []))
    if review_by is not None and review_by <= today:
        review.triggers.append(
            _("The review-by date, %(date)s, has come.") % {"date": review_by.isoformat()}
        )
    names = {c["slug"]: f"{c['solution']} {c['version']}".strip() for c in frozen["candidates"]}
    for c in frozen["candidates"]:
        for group in c.get("terms") or []:
            for row in group["rows"]:
                until = row.get("valid_until")
                if until and until < today.isoformat():
                    review.triggers.append(
                        _("%(name)s: the quote behind “%(term)s” expired on %(date)s.")
                        % {"name": names[c["slug"]], "term": row["label"], "date": until}
                    )
    shortlist = {c["slug"]: c for c in frozen.get("shortlist", [])}
    candidates = list(
        Candidate.objects.filter(project=project, slug__in=list(names)).select_related("solution")
    )
    for candidate in candidates:
        was = shortlist.get(candidate.slug, {}).get("version", candidate.version)
        if candidate.version != was:
            review.triggers.append(
                _("%(name)s: version %(now)s recorded; the decision saw %(was)s.")
                % {"name": candidate.solution.name, "now": candidate.version, "was": was or "—"}
            )
    review.triggers.extend(_probe_changes(project, candidates, frozen, names))
    return review


def _environment(nodes: list[dict[str, Any]]) -> dict[str, set[str]]:
    """GPU models, drivers and CUDA versions a frozen probe run's nodes showed."""
    seen: dict[str, set[str]] = {"models": set(), "drivers": set(), "cuda": set()}
    for node in nodes:
        for part in (node.get("gpus") or "").split(", "):
            if " × " in part:
                seen["models"].add(part.split(" × ", 1)[1])
        if node.get("driver"):
            seen["drivers"].add(node["driver"])
        if node.get("cuda"):
            seen["cuda"].add(node["cuda"])
    return seen


def _probe_changes(
    project: Project,
    candidates: list[Candidate],
    frozen: dict[str, Any],
    names: dict[str, str],
) -> list[str]:
    """A probe run newer than the frozen one that saw another environment."""
    before = {p["candidate"]: p for p in frozen.get("probe_facts", [])}
    latest = probe_selectors.latest_probe_runs(project, candidates)
    labels = {
        "models": _("GPU models"),
        "drivers": _("drivers"),
        "cuda": _("CUDA versions"),
    }
    found = []
    for candidate in candidates:
        run = latest.get(candidate.pk)
        was = before.get(candidate.slug)
        if run is None or was is None or run.pk == was["run"]:
            continue
        now: dict[str, set[str]] = {"models": set(), "drivers": set(), "cuda": set()}
        for node in run.nodes.all():
            if node.error:
                continue
            now["models"] |= {g.get("name") or "?" for g in node.facts.get("gpus", [])}
            if node.facts.get("driver_version"):
                now["drivers"].add(node.facts["driver_version"])
            if node.facts.get("cuda_version"):
                now["cuda"].add(node.facts["cuda_version"])
        then = _environment(was["nodes"])
        for key, label in labels.items():
            if now[key] and now[key] != then[key]:
                found.append(
                    _("%(name)s: probe run %(run)s saw %(what)s %(now)s; the decision saw %(was)s.")
                    % {
                        "name": names[candidate.slug],
                        "run": run.pk,
                        "what": label,
                        "now": ", ".join(sorted(now[key])),
                        "was": ", ".join(sorted(then[key])) or "—",
                    }
                )
    return found
