"""GPU probe output: parsed into facts, judged, kept as evidence, and handed on to become PoC
results (poc.probes.recording).

Everything a probe brings is checked before anything is written: bad input raises
ProbeInputError with a message for the person or pipeline that sent it, and leaves nothing
behind. A stored probe run's verdicts are recorded, by the results side's recorder, as results
(source "probe") for the actions of its project that are bound to a check, through the same
ingest service as CI posts, so the matrix, the cell history and the regressed / recovered
report treat them alike.
"""

import hashlib
import json
import logging
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.history_labels import candidate_part, phrase_part
from evaluations.models import AcceptanceAction, ApiToken, Candidate, Project
from evaluations.services import event_record
from poc.probes import parsers, present
from poc.probes.facts import FACTS_FORMAT, NodeFacts
from poc.probes.models import (
    ProbeBinding,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
    ProbeSource,
    ProbeStatus,
    Verdict,
)
from poc.probes.recording import Recorded, run_record
from poc.probes.rules import checks, health
from poc.probes.rules.health import NodeHealth
from workbench.people import stored_user
from workbench.storage import StoredFile, files_removed_on_failure
from workbench.text import first_unstorable
from workbench.typing import JSON, JSONObject

log = logging.getLogger(__name__)

VERDICT_ORDER = [Verdict.HEALTHY, Verdict.DEGRADED, Verdict.FAILED]


class ProbeInputError(Exception):
    """The probe output cannot be used; nothing was stored. The message says why."""


@dataclass(frozen=True)
class RawOutput:
    """One raw output of one node as it was read: kept byte for byte as evidence."""

    name: str
    text: str
    exit_code: int | None = 0
    error: str = ""


@dataclass
class NodeInput:
    facts: NodeFacts
    outputs: list[RawOutput] = field(default_factory=list)


@dataclass(frozen=True)
class ProbeRecorded:
    run: ProbeRun
    results: Recorded | None  # None when no action is bound to a check


# --- reading input -----------------------------------------------------------------------


def nodes_from_bundle(bundle: JSON) -> list[NodeInput]:
    """The agent's JSON bundle (a dict, already decoded) as one node with its raw outputs."""
    if problem := first_unstorable(bundle, "bundle"):
        raise ProbeInputError(problem)  # before anything reads it: nothing half stored
    try:
        facts = parsers.parse_bundle(bundle)
    except parsers.ParseError as exc:
        raise ProbeInputError(str(exc)) from None
    assert isinstance(bundle, dict)  # parse_bundle refuses anything else
    listed = bundle.get("outputs")
    outputs = []
    for index, output in enumerate(listed if isinstance(listed, list) else []):
        if not isinstance(output, dict):
            continue
        name = str(output.get("name") or f"output {index + 1}")[:500]
        text = str(output.get("stdout") or "")
        error = str(output.get("error") or "")
        if output.get("stderr") and not text:
            error = f"{error} {output['stderr']}".strip()
        code = output.get("exit_code")
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        outputs.append(RawOutput(name, text, exit_code, error[:2000]))
    outputs.append(RawOutput("bundle.json", json.dumps(bundle, ensure_ascii=False, indent=1)))
    return [NodeInput(facts, outputs)]


def nodes_from_text(
    data: bytes | str, *, name: str, host: str = "", expected_gpus: int | None = None
) -> list[NodeInput]:
    """Plain tool output (any format the parsers detect), or an agent bundle saved to a file."""
    if isinstance(data, bytes):
        if len(data) > parsers.MAX_INPUT_BYTES:
            raise ProbeInputError(
                _("The file is over %(mib)s MiB: not nvidia-smi output or an agent bundle.")
                % {"mib": parsers.MAX_INPUT_BYTES >> 20}
            )
        try:
            data = parsers.decode(data)  # UTF-8, or UTF-16 as Windows PowerShell writes it
        except parsers.ParseError:
            raise ProbeInputError(
                _(
                    "The file is not text (UTF-8 or UTF-16): upload nvidia-smi output or an "
                    "agent bundle."
                )
            ) from None
    try:
        kind = parsers.detect(data)
    except parsers.ParseError as exc:
        raise ProbeInputError(str(exc)) from None
    if kind == "bundle":
        try:
            bundle = json.loads(data)
        except (ValueError, RecursionError) as exc:  # detect() saw a bundle; say why not
            raise ProbeInputError(_("The bundle is not valid JSON: %(e)s") % {"e": exc}) from None
        nodes = nodes_from_bundle(bundle)
    else:
        try:
            facts = parsers.parse_output(data, kind=kind, host=host or None)
        except parsers.ParseError as exc:
            raise ProbeInputError(str(exc)) from None
        nodes = [NodeInput(facts, [RawOutput(name[:500] or kind, data)])]
    for node in nodes:
        if host:
            node.facts["host"] = host
        if expected_gpus is not None:
            node.facts["expected_gpu_count"] = expected_gpus
    return nodes


# --- bindings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Binding:
    action: AcceptanceAction
    check: str
    params: JSONObject
    from_template: bool


def bindings_for_project(project: Project) -> list[Binding]:
    """The actions a probe judges: explicit bindings, else the check their template names."""
    from poc.probes.selectors import probe_bindings_for_project

    bindings = []
    for action, explicit, template_check in probe_bindings_for_project(project):
        if explicit is not None:
            if explicit.check_key:
                bindings.append(Binding(action, explicit.check_key, explicit.params, False))
        elif template_check and isinstance(key := template_check.get("check"), str):
            params = template_check.get("params")
            bindings.append(Binding(action, key, params if isinstance(params, dict) else {}, True))
    return bindings


@transaction.atomic
def probe_binding_set(
    *, action: AcceptanceAction, check: str, params: JSONObject, actor: User | None
) -> ProbeBinding:
    """Bind an action to a check of the catalogue (check "" unbinds it, template or not)."""
    cleaned: JSONObject = {}
    if check:
        try:
            cleaned = checks.validate_params(check, params)
        except checks.CheckParamsError as exc:
            raise ValidationError({"params": str(exc)}) from None
    binding = ProbeBinding.objects.select_for_update().filter(action=action).first()
    before = {"check": binding.check_key, "params": binding.params} if binding else None
    if binding is None:
        binding = ProbeBinding(project_id=action.project_id, action=action)
    binding.check_key, binding.params = check, cleaned
    binding.updated_by = stored_user(actor)
    binding.full_clean()
    binding.save()
    event_record(
        project=action.project,
        actor=actor,
        verb="probe.binding_set",
        subject=action.key,
        before=before,
        after={"check": check, "params": cleaned},
    )
    return binding


@transaction.atomic
def probe_binding_reset(*, action: AcceptanceAction, actor: User | None) -> None:
    """Forget an explicit binding: the action goes back to its template's check, if any."""
    binding = ProbeBinding.objects.filter(action=action).first()
    if binding is None:
        return
    event_record(
        project=action.project,
        actor=actor,
        verb="probe.binding_reset",
        subject=action.key,
        before={"check": binding.check_key, "params": binding.params},
    )
    binding.delete()


# --- recording ---------------------------------------------------------------------------


def store(project: Project, text: str, created: list[str]) -> tuple[str, str, int]:
    data = text.encode("utf-8", "surrogateescape")
    digest = hashlib.sha256(data).hexdigest()
    name = f"evidence/{project.pk}/{digest[:2]}/{digest}"
    if not default_storage.exists(name):
        stored = default_storage.save(name, ContentFile(data))
        if stored != name:  # the storage renamed it: a concurrent writer stored the same bytes
            default_storage.delete(stored)
        else:
            created.append(name)
    return name, digest, len(data)


def worst(verdicts: list[str]) -> str:
    return (
        max(verdicts, key=lambda v: VERDICT_ORDER.index(Verdict(v))) if verdicts else Verdict.FAILED
    )


def probe_record(
    *,
    project: Project,
    candidate: Candidate,
    source: str,
    nodes: list[NodeInput],
    actor: User | None,
    token: ApiToken | None = None,
) -> ProbeRecorded:
    """Store a probe run of `candidate` with its nodes' facts, health and raw outputs, and
    record a result for every bound action of the project. All or nothing."""
    if candidate.project_id != project.pk:
        raise ProbeInputError(_("The candidate belongs to another project."))
    if not nodes:
        raise ProbeInputError(_("The probe read no node."))
    judged = [(node, health.judge_node(node.facts)) for node in nodes]
    actor = stored_user(actor)
    with files_removed_on_failure() as created, transaction.atomic():
        run = ProbeRun.objects.create(
            project=project,
            candidate=candidate,
            source=source,
            status=ProbeStatus.DONE,
            verdict=worst([h["verdict"] for _n, h in judged]),
            node_count=len(nodes),
            gpu_count=sum(len(n.facts["gpus"]) for n in nodes),
            parser_version=parsers.PARSER_VERSION,
            facts_format=FACTS_FORMAT,
            created_by=actor,
            token=token,
            finished_at=timezone.now(),
        )
        cited = store_nodes(run, judged, created, several=len(nodes) > 1)
        recorded = run_record(run, [node.facts for node in nodes], cited, actor=actor, token=token)
        event_record(
            project=project,
            actor=actor,
            verb="probe.recorded",
            parts=[candidate_part(candidate), phrase_part("probe.run", n=run.pk)],
            after={
                "source": source,
                "verdict": run.verdict,
                "nodes": run.node_count,
                "gpus": run.gpu_count,
                "results": recorded.stored if recorded else 0,
                **({"token": token.name} if token else {}),
            },
        )
    return ProbeRecorded(run, recorded)


def store_nodes(
    run: ProbeRun,
    judged: list[tuple[NodeInput, NodeHealth]],
    created: list[str],
    *,
    several: bool,
    start: int = 0,
) -> list[StoredFile]:
    """Write nodes of a run with their facts, health and raw outputs (kept as evidence files);
    returns the stored outputs as files results may cite. `start`: position of the first."""
    node_rows = ProbeNode.objects.bulk_create(
        [
            ProbeNode(
                run=run,
                host=(node.facts.get("host") or "")[:255],
                position=start + offset,
                facts=node.facts,
                health=node_health,
                verdict=node_health["verdict"],
                gpu_count=len(node.facts["gpus"]),
            )
            for offset, (node, node_health) in enumerate(judged)
        ]
    )
    outputs: list[ProbeOutput] = []
    cited: list[StoredFile] = []
    base = ProbeOutput.objects.filter(run=run).count() if start else 0
    for node_row, (node, _health) in zip(node_rows, judged, strict=True):
        for output in node.outputs:
            stored = store(run.project, output.text, created) if output.text else None
            outputs.append(
                ProbeOutput(
                    run=run,
                    node=node_row,
                    name=output.name[:500],
                    exit_code=output.exit_code,
                    error=output.error,
                    file=stored[0] if stored else "",
                    sha256=stored[1] if stored else "",
                    size=stored[2] if stored else 0,
                    position=base + len(outputs),
                )
            )
            if stored:
                prefix = f"{node_row.host}-" if several and node_row.host else ""
                cited.append(
                    StoredFile(
                        name=present.output_filename(prefix + output.name),
                        file=stored[0],
                        sha256=stored[1],
                        size=stored[2],
                        content_type=_content_type(output),
                    )
                )
    ProbeOutput.objects.bulk_create(outputs)
    return cited


def _content_type(output: RawOutput) -> str:
    head = output.text.lstrip()[:1]
    if head == "<":
        return "application/xml"
    if head in "{[" and head:
        return "application/json"
    return "text/plain"


# --- entry points ------------------------------------------------------------------------


def probe_ingest_bundle(
    *,
    project: Project,
    candidate: Candidate,
    bundle: JSON,
    actor: User | None,
    token: ApiToken | None = None,
    source: str = ProbeSource.AGENT,
) -> ProbeRecorded:
    """A bundle posted by the push agent (or uploaded later): parsed, judged, recorded."""
    return probe_record(
        project=project,
        candidate=candidate,
        source=source,
        nodes=nodes_from_bundle(bundle),
        actor=actor,
        token=token,
    )
