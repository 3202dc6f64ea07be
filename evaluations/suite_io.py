"""Reading and writing a project's acceptance suite as YAML or CSV.

Parsing is pure: it returns validated rows or every problem with its line number, and writes
nothing. `services.suite_import` applies a clean parse in one transaction.
"""

import csv
import io
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.utils.translation import gettext as _

from evaluations.catalog import SLUG_RE
from evaluations.models import OWNER_TEAMS, Dimension, Importance, Scenario
from workbench.spreadsheets import formula_safe, formula_unescaped
from workbench.text import text_problem

FORMAT = "workbench-acceptance-suite/1"
CSV_COLUMNS = [
    "feature",
    "dimension",
    "owner_team",
    "importance",
    "action_key",
    "scenario",
    "question",
    "steps",
    "expected_evidence",
    "pass_criterion",
]
ACTION_TEXT_FIELDS = ("question", "steps", "expected_evidence", "pass_criterion")
MAX_TEXT = 5000


@dataclass
class ActionRow:
    line: int
    key: str
    scenario: str
    question: str
    steps: str
    expected_evidence: str
    pass_criterion: str


@dataclass
class RequirementRow:
    line: int
    feature: str
    dimension: str
    owner_team: str
    importance: str
    actions: list[ActionRow] = field(default_factory=list)


@dataclass
class ParseResult:
    requirements: list[RequirementRow] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def error(self, line: int, message: str) -> None:
        self.errors.append((line, message))


# --- export ------------------------------------------------------------------------------


def _requirement_dict(requirement: Any) -> dict[str, Any]:
    return {
        "feature": requirement.feature,
        "dimension": requirement.dimension,
        "owner_team": requirement.owner_team,
        "importance": requirement.importance,
        "actions": [
            {
                "key": action.key,
                "scenario": action.scenario,
                "question": action.question,
                "steps": action.steps,
                "expected_evidence": action.expected_evidence,
                "pass_criterion": action.pass_criterion,
            }
            for action in requirement.shown_actions
        ],
    }


def export_yaml(project: Any, requirements: list[Any]) -> str:
    document = {
        "format": FORMAT,
        "project": project.slug,
        "requirements": [_requirement_dict(r) for r in requirements],
    }
    return yaml.safe_dump(document, allow_unicode=True, sort_keys=False, width=100)


def export_csv(requirements: list[Any]) -> str:
    buffer = io.StringIO()
    plain = csv.writer(buffer, lineterminator="\n")
    plain.writerow(CSV_COLUMNS)

    def writerow(row: list[Any]) -> None:  # a cell that would run as a formula: written as text
        plain.writerow([formula_safe(value) for value in row])

    for requirement in requirements:
        data = _requirement_dict(requirement)
        head = [data["feature"], data["dimension"], data["owner_team"], data["importance"]]
        if not data["actions"]:
            writerow([*head, "", "", "", "", "", ""])
        for action in data["actions"]:
            writerow(
                [
                    *head,
                    action["key"],
                    action["scenario"],
                    *(action[name] for name in ACTION_TEXT_FIELDS),
                ]
            )
    return buffer.getvalue()


# --- validation shared by both formats ---------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return str(value)
    if not isinstance(value, str):
        raise TypeError
    return value.strip()


def _check_requirement(
    result: ParseResult, line: int, raw: dict[str, Any]
) -> RequirementRow | None:
    try:
        feature = _text(raw.get("feature"))
        dimension = _text(raw.get("dimension"))
        owner_team = _text(raw.get("owner_team"))
        importance = _text(raw.get("importance")) or Importance.MUST
    except TypeError:
        result.error(line, _("requirement fields must be text"))
        return None
    ok = True
    if not feature:
        result.error(line, _("feature is empty"))
        ok = False
    elif len(feature) > 300:
        result.error(line, _("feature is longer than 300 characters"))
        ok = False
    owners = [value for value, _label in OWNER_TEAMS]
    for name, value, allowed in (
        ("dimension", dimension, Dimension.values),
        ("owner_team", owner_team, owners),
        ("importance", importance, Importance.values),
    ):
        if value not in allowed:
            result.error(
                line,
                _("%(field)s %(value)r is not one of: %(allowed)s")
                % {"field": name, "value": value, "allowed": ", ".join(allowed)},
            )
            ok = False
    if not ok:
        return None
    return RequirementRow(line, feature, dimension, owner_team, importance)


def _check_action(
    result: ParseResult, line: int, raw: dict[str, Any], seen_keys: dict[str, int]
) -> ActionRow | None:
    try:
        key = _text(raw.get("key"))
        scenario = _text(raw.get("scenario"))
        texts = {name: _text(raw.get(name)) for name in ACTION_TEXT_FIELDS}
    except TypeError:
        result.error(line, _("action fields must be text"))
        return None
    ok = True
    if not SLUG_RE.match(key) or len(key) > 80:
        result.error(
            line,
            _("key %(key)r must be lowercase letters, digits and hyphens (at most 80)")
            % {"key": key},
        )
        ok = False
    elif key in seen_keys:
        result.error(
            line,
            _("key %(key)s is used twice (first on line %(first)d)")
            % {"key": key, "first": seen_keys[key]},
        )
        ok = False
    else:
        seen_keys[key] = line
    if scenario not in Scenario.values:
        result.error(
            line,
            _("scenario %(value)r is not one of: %(allowed)s")
            % {"value": scenario, "allowed": ", ".join(Scenario.values)},
        )
        ok = False
    for name in ("question", "pass_criterion"):
        if not texts[name]:
            result.error(line, _("%(field)s is empty") % {"field": name})
            ok = False
    for name, value in texts.items():
        if len(value) > MAX_TEXT:
            result.error(
                line,
                _("%(field)s is longer than %(max)d characters") % {"field": name, "max": MAX_TEXT},
            )
            ok = False
    if not ok:
        return None
    return ActionRow(line, key, scenario, **texts)


# --- YAML --------------------------------------------------------------------------------


MAX_NODES = 200_000


class _TooBig(Exception):
    pass


def _node_data(node: yaml.Node, budget: list[int]) -> Any:
    """Plain data from a composed node, with each mapping's line kept under '__line__'.

    `budget` bounds the nodes visited, so aliases cannot blow a small file up (billion laughs).
    """
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if isinstance(node, yaml.MappingNode):
        data: dict[str, Any] = {"__line__": node.start_mark.line + 1}
        for key_node, value_node in node.value:
            data[str(key_node.value)] = _node_data(value_node, budget)
        return data
    if isinstance(node, yaml.SequenceNode):
        return [_node_data(item, budget) for item in node.value]
    if isinstance(node, yaml.ScalarNode):
        return (
            yaml.safe_load(yaml.serialize(node))
            if node.tag != "tag:yaml.org,2002:str"
            else node.value
        )
    return None


def _unstorable(result: ParseResult, text: str) -> bool:
    """Lines holding text the database cannot store, each named; True when there were any."""
    found = False
    for number, line in enumerate(text.splitlines(), start=1):
        if problem := text_problem(line):
            result.error(number, _("the line %(problem)s") % {"problem": problem})
            found = True
    return found


def parse_yaml(text: str) -> ParseResult:
    result = ParseResult()
    if _unstorable(result, text):
        return result
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        result.error(
            line, _("not valid YAML: %(problem)s") % {"problem": getattr(exc, "problem", exc)}
        )
        return result
    try:
        data = _node_data(root, [MAX_NODES]) if root is not None else None
    except _TooBig:
        result.error(1, _("the document is too large or expands too far"))
        return result
    except Exception as exc:  # noqa: BLE001 - PyYAML's constructors raise whatever they meet
        # A scalar whose tag cannot be built ("!!int abc", "!!float" with no value: an
        # IndexError inside PyYAML), named like any other YAML problem.
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0][:200]
        result.error(line, _("not valid YAML: %(problem)s") % {"problem": problem})
        return result
    if not isinstance(data, dict) or not isinstance(data.get("requirements"), list):
        result.error(1, _("expected a mapping with a list under 'requirements'"))
        return result
    seen_keys: dict[str, int] = {}
    for raw in data["requirements"]:
        if not isinstance(raw, dict):
            result.error(1, _("each requirement must be a mapping"))
            continue
        line = raw["__line__"]
        requirement = _check_requirement(result, line, raw)
        actions = raw.get("actions") or []
        if not isinstance(actions, list):
            result.error(line, _("actions must be a list"))
            continue
        for raw_action in actions:
            if not isinstance(raw_action, dict):
                result.error(line, _("each action must be a mapping"))
                continue
            action = _check_action(result, raw_action["__line__"], raw_action, seen_keys)
            if requirement and action:
                requirement.actions.append(action)
        if requirement:
            result.requirements.append(requirement)
    return result


# --- CSV ---------------------------------------------------------------------------------


def parse_csv(text: str) -> ParseResult:
    result = ParseResult()
    if _unstorable(result, text):
        return result
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    try:
        columns = reader.fieldnames or []
    except csv.Error as exc:
        result.error(1, _("not valid CSV: %(problem)s") % {"problem": exc})
        return result
    missing = [c for c in CSV_COLUMNS if c not in columns]
    if missing:
        result.error(1, _("missing columns: %(columns)s") % {"columns": ", ".join(missing)})
        return result
    seen_keys: dict[str, int] = {}
    by_requirement: dict[tuple[str, str], RequirementRow] = {}
    try:
        for read in reader:
            line = reader.line_num
            row = {k: formula_unescaped(v) if isinstance(v, str) else v for k, v in read.items()}
            requirement = _check_requirement(result, line, row)
            has_action = any((row.get(c) or "").strip() for c in CSV_COLUMNS[4:])
            action = None
            if has_action:
                action_raw = {**row, "key": row.get("action_key")}
                action = _check_action(result, line, action_raw, seen_keys)
            if requirement is None:
                continue
            ident = (requirement.feature.casefold(), requirement.dimension)
            existing = by_requirement.get(ident)
            if existing is None:
                by_requirement[ident] = existing = requirement
                result.requirements.append(requirement)
            elif (existing.owner_team, existing.importance) != (
                requirement.owner_team,
                requirement.importance,
            ):
                result.error(
                    line,
                    _("owner_team or importance differs from line %(first)d for the same feature")
                    % {"first": existing.line},
                )
            if action:
                existing.actions.append(action)
    except csv.Error as exc:
        result.error(reader.line_num, _("not valid CSV: %(problem)s") % {"problem": exc})
    return result


def parse(text: str, filename: str) -> ParseResult:
    if filename.lower().endswith(".csv"):
        return parse_csv(text)
    return parse_yaml(text)
