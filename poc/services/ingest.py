"""Results posted by CI pipelines: validated whole, stored in one transaction, in a constant
number of queries whatever the size of the batch."""

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import partial

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils import timezone

from evaluations import selectors as evaluation_selectors
from evaluations.models import OWNER_TEAMS, ApiToken, Project
from evaluations.services import event_record
from poc import junit, run_tallies
from poc.models import (
    Delivery,
    Evidence,
    EvidenceKind,
    Outcome,
    Result,
    ResultCell,
    Run,
    RunImport,
    Source,
    outcome_detail_problems,
)
from poc.services.carry import evidence_carry
from poc.services.cells import lock_cells
from poc.services.ingest_keys import Unknown, actions_by_key, by_key, candidates_by_slug
from poc.services.results import carried_delivery
from workbench.bulk import bulk_insert
from workbench.people import stored_user
from workbench.storage import StoredFile
from workbench.text import text_problem
from workbench.typing import JSON, JSONObject

MAX_ROWS = 5000
MAX_TEXT = 20_000
MAX_EVIDENCE_URLS = 20
OWNER_VALUES = {value for value, _label in OWNER_TEAMS}
OUTCOMES = frozenset(Outcome.values)
DELIVERIES = frozenset(Delivery.values)
# The API's names for the result fields the outcome rule names.
API_FIELD_NAMES = {
    "failure_cause": "failure_cause",
    "integration_what": "integration.what",
    "integration_owner_team": "integration.owner_team",
    "integration_effort_days": "integration.effort_days",
}
_url = URLValidator(schemes=["http", "https"])


class IngestError(Exception):
    """Some rows are bad: nothing was stored. `errors` lists every bad row by index;
    `unmapped`, for a JUnit report, the testcases that name no action."""

    def __init__(
        self,
        errors: list[dict[str, object]],
        message: str = "",
        unmapped: list[dict[str, str]] | None = None,
    ) -> None:
        super().__init__(message or f"{len(errors)} bad rows")
        self.errors = errors
        self.message = message
        self.unmapped = unmapped


@dataclass(frozen=True)
class RunData:
    external_id: str
    name: str = ""
    url: str = ""
    commit: str = ""
    candidate: str = ""


@dataclass
class ResultRow:
    index: int
    candidate_id: int
    action_id: int
    outcome: str
    note: str = ""
    failure_cause: str = ""
    integration_what: str = ""
    integration_owner_team: str = ""
    integration_effort_days: Decimal | None = None
    integration_delivery: str = ""
    integration_delivered_by: str = ""
    evidence_urls: list[str] = field(default_factory=list)
    evidence_files: list[StoredFile] = field(default_factory=list)
    # The result replaces the evidence a person recorded on the cell (poc.services.carry).
    supersedes_evidence: bool = False
    candidate_slug: str = ""
    action_key: str = ""


def _carried_delivery(
    rows: list[ResultRow], previous_ids: list[int | None]
) -> list[tuple[str, str]]:
    """Who delivers each row's integration need: as posted, or as the cell's previous result
    said (poc.services.results.carried_delivery), read in one query."""
    wanted = {
        pid
        for row, pid in zip(rows, previous_ids, strict=True)
        if pid
        and row.outcome == Outcome.NEEDS_INTEGRATION
        and not (row.integration_delivery or row.integration_delivered_by)
    }
    earlier = {
        r.pk: r
        for r in Result.objects.filter(pk__in=wanted).only(
            "outcome", "integration_delivery", "integration_delivered_by"
        )
    }
    return [
        carried_delivery(
            row.outcome,
            row.integration_delivery,
            row.integration_delivered_by,
            earlier.get(pid) if pid else None,
        )
        for row, pid in zip(rows, previous_ids, strict=True)
    ]


def _text(raw: JSONObject, name: str, problems: dict[str, str]) -> str:
    value = raw.get(name, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        problems[name] = "must be a string"
        return ""
    problem = text_problem(value)
    if problem:
        problems[name] = problem
        return ""
    if len(value) > MAX_TEXT:
        problems[name] = f"longer than {MAX_TEXT} characters"
    return value.strip()


def validate_rows(
    project: Project, rows: list[JSON], *, default_candidate: str = ""
) -> list[ResultRow]:
    """Check every row against the project; raise IngestError listing each bad one."""
    if not rows:
        raise IngestError([], "results must hold at least one result")
    if len(rows) > MAX_ROWS:
        raise IngestError([], f"at most {MAX_ROWS} results per request, got {len(rows)}")
    candidates = candidates_by_slug(project)
    unknown_candidate = Unknown("candidate", candidates)
    keys = {
        key for r in rows if isinstance(r, dict) and isinstance(key := r.get("action"), str) and key
    }
    actions, unknown_action = actions_by_key(project, keys)
    errors: list[dict[str, object]] = []
    valid: list[ResultRow] = []
    for index, raw in enumerate(rows):
        if not isinstance(raw, dict):
            errors.append({"index": index, "errors": {"row": "must be an object"}})
            continue
        problems: dict[str, str] = {}
        candidate_slug = raw.get("candidate") or default_candidate
        candidate = by_key(candidates, candidate_slug) if isinstance(candidate_slug, str) else None
        if candidate is None:
            problems["candidate"] = unknown_candidate(candidate_slug)
        key = raw.get("action")
        action = actions.get(key) if isinstance(key, str) else None
        if action is None:
            problems["action"] = unknown_action(key)
        outcome = raw.get("outcome")
        if not isinstance(outcome, str) or outcome not in OUTCOMES:
            problems["outcome"] = f"{str(outcome)[:60]!r} is not one of {', '.join(Outcome.values)}"
        note = _text(raw, "note", problems)
        failure_cause = _text(raw, "failure_cause", problems)
        integration = raw.get("integration") or {}
        what = owner = delivery = delivered_by = ""
        effort: Decimal | None = None
        if not isinstance(integration, dict):
            problems["integration"] = (
                "must be an object with what, owner_team, effort_days (and delivery, delivered_by)"
            )
        elif outcome == Outcome.NEEDS_INTEGRATION:
            what = _text(integration, "what", problems)
            given_owner = integration.get("owner_team") or ""
            if isinstance(given_owner, str) and given_owner in OWNER_VALUES:
                owner = given_owner
            elif given_owner:
                problems["integration.owner_team"] = (
                    f"{str(given_owner)[:60]!r} is not one of {', '.join(sorted(OWNER_VALUES))}"
                )
            effort = _effort(integration.get("effort_days"), problems)
            given_delivery = integration.get("delivery") or ""
            if isinstance(given_delivery, str) and given_delivery in DELIVERIES:
                delivery = given_delivery
            elif given_delivery:
                problems["integration.delivery"] = (
                    f"{str(given_delivery)[:60]!r} is not one of {', '.join(Delivery.values)}"
                )
            delivered_by = _text(integration, "delivered_by", problems)
            if len(delivered_by) > 200:
                problems["integration.delivered_by"] = "at most 200 characters"
        if isinstance(outcome, str) and isinstance(integration, dict):
            # What the outcome requires, by the rule the model applies (bulk inserts skip it).
            lacking = outcome_detail_problems(
                outcome=outcome,
                failure_cause=failure_cause,
                integration_what=what,
                integration_owner_team=owner,
                integration_effort_days=effort,
            )
            for name, message in lacking.items():
                problems.setdefault(API_FIELD_NAMES[name], message)
        urls = raw.get("evidence_urls") or []
        if not isinstance(urls, list) or len(urls) > MAX_EVIDENCE_URLS:
            problems["evidence_urls"] = f"must be a list of at most {MAX_EVIDENCE_URLS} URLs"
            urls = []
        for url in urls:
            try:
                if not isinstance(url, str) or len(url) > 2000:
                    raise ValidationError("bad")
                _url(url)
            except ValidationError:
                problems["evidence_urls"] = f"{str(url)[:100]!r} is not an http(s) URL"
        supersedes = raw.get("supersedes_evidence", False)
        if not isinstance(supersedes, bool):
            problems["supersedes_evidence"] = "must be true or false"
        if problems:
            errors.append({"index": index, "errors": problems})
            continue
        assert candidate is not None and action is not None
        valid.append(
            ResultRow(
                index=index,
                candidate_id=candidate.pk,
                action_id=action.pk,
                outcome=str(outcome),
                note=note,
                failure_cause=failure_cause if outcome == Outcome.FAILED else "",
                integration_what=what,
                integration_owner_team=owner,
                integration_effort_days=effort,
                integration_delivery=str(delivery),
                integration_delivered_by=delivered_by,
                evidence_urls=[url for url in urls if isinstance(url, str)],
                supersedes_evidence=supersedes is True,
                candidate_slug=candidate.slug,
                action_key=action.key,
            )
        )
    if errors:
        raise IngestError(errors)
    return valid


def _effort(raw: JSON, problems: dict[str, str]) -> Decimal | None:
    """The effort as a number of person-days, or None when absent (the outcome rule says
    whether it is needed) or malformed (the problem is named)."""
    if raw is None or raw == "":
        return None
    if isinstance(raw, bool):
        problems["integration.effort_days"] = f"{raw!r} is not a number"
        return None
    try:
        value = Decimal(str(raw))
    except InvalidOperation:
        problems["integration.effort_days"] = f"{raw!r} is not a number"
        return None
    if not value.is_finite() or value < 0 or value >= Decimal("1000000"):
        problems["integration.effort_days"] = "must be between 0 and 999999.9"
        return None
    # Rounded first, then checked: 999999.95 rounds to 1000000.0, which the column (7 digits,
    # one decimal) cannot hold.
    value = value.quantize(Decimal("0.1"))
    if value >= Decimal("1000000"):
        problems["integration.effort_days"] = "must be between 0 and 999999.9 once rounded to 0.1"
        return None
    return value


def classify(previous: str | None, outcome: str) -> str:
    if previous is None:
        return "new"
    if previous == outcome:
        return "unchanged"
    if previous == Outcome.PASSED and outcome == Outcome.FAILED:
        return "regressed"
    if previous == Outcome.FAILED and outcome == Outcome.PASSED:
        return "recovered"
    return "changed"


@transaction.atomic
def results_ingest(
    *,
    project: Project,
    run: RunData,
    rows: list[ResultRow],
    token: ApiToken | None,
    user: User | None,
    kind: str = "json",
    unmapped: list[dict[str, str]] | None = None,
    source: str = Source.CI,
) -> tuple[RunImport, dict[str, list[dict[str, str]]]]:
    """Store validated rows for one run; returns the import record and the cells that
    regressed or recovered. Posting again for the same run appends to it."""
    run_row = _run_for(project, run)
    cell_keys = {(r.candidate_id, r.action_id) for r in rows}
    lock_cells(cell_keys)  # also the cells that have no row yet
    candidate_ids = {c for c, _a in cell_keys}
    action_ids = {a for _c, a in cell_keys}
    cells = {  # (candidate, action) -> (outcome, result id, result count), locked
        (c, a): (outcome, result_id, count)
        for c, a, outcome, result_id, count in ResultCell.objects.select_for_update()
        .filter(project=project, candidate_id__in=candidate_ids, action_id__in=action_ids)
        .values_list("candidate_id", "action_id", "outcome", "result_id", "result_count")
    }
    actor = stored_user(user)
    counts = dict.fromkeys(("new", "unchanged", "changed", "regressed", "recovered"), 0)
    latest = {key: (outcome, result_id) for key, (outcome, result_id, _n) in cells.items()}
    previous_ids: list[int | None] = []
    kinds: list[str] = []
    for row in rows:
        key = (row.candidate_id, row.action_id)
        previous_outcome, previous_id = latest.get(key, (None, None))
        change = classify(previous_outcome, row.outcome)
        counts[change] += 1
        kinds.append(change)
        previous_ids.append(previous_id)
        # A later row for the same cell compares with this one; its previous result stays the
        # last one stored before this post (ids are known only after the insert).
        latest[key] = (row.outcome, previous_id)  # type: ignore[assignment]
    delivered = _carried_delivery(rows, previous_ids)
    now = timezone.now()
    record = RunImport.objects.create(
        run=run_row,
        token=token,
        posted_by=actor,
        kind=kind,
        result_count=len(rows),
        unmapped=unmapped or [],
        **counts,
    )
    result_ids = bulk_insert(
        Result,
        {
            "candidate": [r.candidate_id for r in rows],
            "action": [r.action_id for r in rows],
            "outcome": [r.outcome for r in rows],
            "failure_cause": [r.failure_cause for r in rows],
            "integration_what": [r.integration_what for r in rows],
            "integration_owner_team": [r.integration_owner_team for r in rows],
            "integration_effort_days": [r.integration_effort_days for r in rows],
            "integration_delivery": [d for d, _by in delivered],
            "integration_delivered_by": [by for _d, by in delivered],
            "note": [r.note for r in rows],
            "previous": previous_ids,
            "change": kinds,
        },
        constants={
            "project": project.pk,
            "change_reason": "",
            "source": source,
            "run": run_row.pk,
            "run_import": record.pk,
            "run_reference": run_row.external_id[:300],
            "recorded_by": actor.pk if actor else None,
            "recorded_at": now,
        },
        returning_ids=True,
    )
    # cell -> (result id, outcome, evidence cited, effort)
    final: dict[tuple[int, int], tuple[int, str, int, Decimal | None]] = {}
    evidence: dict[str, list[object]] = {
        name: [] for name in ("result", "kind", "url", "file", "name", "sha256", "size", "type")
    }
    for row, result_id in zip(rows, result_ids, strict=True):
        cited = len(row.evidence_urls) + len(row.evidence_files)
        final[(row.candidate_id, row.action_id)] = (
            result_id,
            row.outcome,
            cited,
            row.integration_effort_days,
        )
        for url in row.evidence_urls:
            _cite(evidence, result_id, EvidenceKind.LINK, url=url, name=url[:255])
        for stored in row.evidence_files:
            _cite(
                evidence,
                result_id,
                EvidenceKind.FILE,
                file=stored.file,
                name=stored.name[:255],
                sha256=stored.sha256,
                size=stored.size,
                content_type=stored.content_type,
            )
    if evidence["result"]:
        bulk_insert(
            Evidence,
            {
                "result": evidence["result"],
                "kind": evidence["kind"],
                "url": evidence["url"],
                "file": evidence["file"],
                "name": evidence["name"],
                "sha256": evidence["sha256"],
                "size": evidence["size"],
                "content_type": evidence["type"],
            },
            constants={
                "project": project.pk,
                "uploaded_by": actor.pk if actor else None,
                "uploaded_at": now,
            },
        )
    carried = evidence_carry(
        project_id=project.pk,
        previous={key: result_id for key, (_o, result_id, _n) in cells.items()},
        final={key: result_id for key, (result_id, *_rest) in final.items()},
        supersede={(r.candidate_id, r.action_id) for r in rows if r.supersedes_evidence},
    )
    posted = Counter((r.candidate_id, r.action_id) for r in rows)
    keys = list(final)
    bulk_insert(
        ResultCell,
        {
            "candidate": [k[0] for k in keys],
            "action": [k[1] for k in keys],
            "result": [final[k][0] for k in keys],
            "outcome": [final[k][1] for k in keys],
            "result_count": [(cells[k][2] if k in cells else 0) + posted[k] for k in keys],
            "evidence_count": [final[k][2] + carried.get(k, 0) for k in keys],
            "integration_effort_days": [final[k][3] for k in keys],
        },
        constants={"project": project.pk},
        conflict_fields=["candidate", "action"],
        update_fields=[
            "result",
            "outcome",
            "result_count",
            "evidence_count",
            "integration_effort_days",
        ],
    )
    event_record(
        project=project,
        actor=actor,
        verb="results.imported",
        subject=f"{run_row.external_id} ({kind})",
        after={"results": len(rows), **counts, **({"token": token.name} if token else {})},
    )
    tally = run_tallies.tally_rows(
        (r.candidate_id, r.action_id, r.outcome, kind) for r, kind in zip(rows, kinds, strict=True)
    )  # for the trends of the CI runs page, kept once the post is committed
    transaction.on_commit(partial(run_tallies.remember, record.pk, record.posted_at, tally))
    return record, _notable(rows, kinds)


def _cite(
    columns: dict[str, list[object]],
    result_id: int,
    kind: str,
    *,
    name: str,
    url: str = "",
    file: str = "",
    sha256: str = "",
    size: int = 0,
    content_type: str = "",
) -> None:
    for column, value in (
        ("result", result_id),
        ("kind", kind),
        ("url", url),
        ("file", file),
        ("name", name),
        ("sha256", sha256),
        ("size", size),
        ("type", content_type),
    ):
        columns[column].append(value)


def _notable(rows: list[ResultRow], kinds: list[str]) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = {"regressed": [], "recovered": []}
    for row, kind in zip(rows, kinds, strict=True):
        if kind in out:
            out[kind].append({"candidate": row.candidate_slug, "action": row.action_key})
    return out


def _run_for(project: Project, run: RunData) -> Run:
    candidate = None
    if run.candidate:
        candidate = by_key(candidates_by_slug(project), run.candidate)
    run_row, created = Run.objects.select_for_update().get_or_create(
        project=project,
        external_id=run.external_id,
        defaults={"name": run.name, "url": run.url, "commit": run.commit, "candidate": candidate},
    )
    if not created:
        changed: dict[str, object] = {
            name: value
            for name, value in (("name", run.name), ("url", run.url), ("commit", run.commit))
            if value and getattr(run_row, name) != value
        }
        if candidate is not None and run_row.candidate_id != candidate.pk:
            changed["candidate"] = candidate
        if changed:
            for name, value in changed.items():
                setattr(run_row, name, value)
            run_row.save()
    return run_row


@dataclass(frozen=True)
class JUnitImport:
    record: RunImport
    notable: dict[str, list[dict[str, str]]]
    unmapped: list[dict[str, str]]


def junit_ingest(
    *,
    project: Project,
    candidate: str,
    external_id: str,
    report: bytes,
    token: ApiToken | None,
    user: User | None,
    supersede_evidence: bool = False,
) -> JUnitImport:
    """Store a JUnit report as one run's results for one candidate: each testcase names an
    action by its key (or a former key) and the worst outcome of an action's testcases wins.
    Raises IngestError naming what is wrong (unreadable report, no testcase that maps, bad
    rows); nothing is stored then."""
    try:
        cases = junit.parse_testcases(report)
    except junit.JUnitError as exc:
        raise IngestError([], str(exc)) from exc
    keys = evaluation_selectors.action_keys_with_aliases(project)
    outcomes, unmapped = junit.outcomes_by_action(cases, keys)
    rows: list[JSON] = [
        {
            "candidate": candidate,
            "action": o.key,
            "outcome": o.outcome,
            "failure_cause": o.failure_cause,
            "note": "JUnit testcases: " + ", ".join(o.testcases)[:1000],
            "supersedes_evidence": supersede_evidence,
        }
        for o in outcomes
    ]
    if not rows:
        raise IngestError([], "no testcase maps to an action of this project", unmapped)
    valid = validate_rows(project, rows)
    record, notable = results_ingest(
        project=project,
        run=RunData(external_id=external_id, candidate=candidate),
        rows=valid,
        token=token,
        user=user,
        kind="junit",
        unmapped=unmapped,
    )
    return JUnitImport(record, notable, unmapped)
