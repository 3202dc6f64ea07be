"""Browser pages of GPU probes: runs per candidate, a run's nodes and GPUs, raw outputs, uploads
from nodes the workbench cannot reach, the push agent, and which actions probes judge."""

import json
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import RequestDataTooBig, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods, require_POST

from evaluations import selectors as evaluation_selectors
from evaluations.models import AcceptanceAction, Candidate
from evaluations.selectors import candidates_in_play
from poc.probes import present, recording, selectors
from poc.probes.forms import FlagForm, ProbeBindingForm, ProbeUploadForm
from poc.probes.models import (
    ProbeNode,
    ProbeRun,
    ProbeSource,
    ProbeStatus,
)
from poc.probes.node import agent as probe_agent_module
from poc.probes.rules import checks, health
from poc.probes.services import probes as probe_services
from workbench import tables
from workbench.forms import form_add_service_error
from workbench.tables import Column, Filter, TableSpec
from workbench.typing import AuthedHttpRequest


def candidate_choices(candidates: list[Candidate]) -> list[tuple[str, str]]:
    return [(c.slug, f"{c.solution.name} ({c.slug})") for c in candidates]


RUNS_TABLE = TableSpec(
    dom_id="probe-runs-table",
    columns=(
        Column("run", gettext_lazy("Run"), ("created_at",), descending_first=True),
        Column("candidate", gettext_lazy("Candidate"), ("candidate__position",)),
        Column("cluster", gettext_lazy("Cluster"), ("cluster__name",)),
        Column("source", gettext_lazy("Source"), ("source",)),
        Column("status", gettext_lazy("Health"), ("status", "verdict")),
        Column("gpus", gettext_lazy("GPUs"), ("gpu_count",), numeric=True, descending_first=True),
        Column("by", gettext_lazy("By")),
    ),
    default_sort="-run",
    filters=(
        Filter("candidate", gettext_lazy("Candidate"), "candidate__slug"),
        Filter("cluster", gettext_lazy("Cluster"), "cluster_id"),
        Filter("source", gettext_lazy("Source"), "source", choices=ProbeSource.choices),
        Filter("status", gettext_lazy("Status"), "status", choices=ProbeStatus.choices),
    ),
)


def _probes_page(
    request: AuthedHttpRequest,
    access: evaluation_selectors.ProjectAccess,
    *,
    form: ProbeUploadForm | None = None,
    status: int = 200,
) -> HttpResponse:
    project = access.project
    candidates = candidates_in_play(project, include_all=True)
    table = tables.table_for(
        RUNS_TABLE,
        request.GET,
        selectors.probe_run_rows(project),
        path=request.path,
        choices={
            "candidate": candidate_choices(candidates),
            "cluster": selectors.cluster_choices(project),
        },
    )
    context = {"access": access, "project": project, "tab": "probes", "table": table}
    if tables.wants_table(request.htmx, RUNS_TABLE):
        return tables.table_response(render(request, "probes/probes.html#table", context), table)
    latest = selectors.latest_probe_runs(project, candidates)
    if form is None and access.can_write:
        form = ProbeUploadForm(candidates=candidate_choices(candidates))
    context |= {
        "candidates": [(c, latest.get(c.pk)) for c in candidates],
        "form": form,
        "limit_mb": settings.API_MAX_BODY_BYTES // 1_048_576,
    }
    return render(request, "probes/probes.html", context, status=status)


@login_required
def probes(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Each candidate's latest GPU evidence, the recent probe runs, and the upload form."""
    return _probes_page(request, evaluation_selectors.project_access(request.user, slug))


@login_required
@require_POST
def probe_upload(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Store uploaded or pasted probe output for one candidate; bad input keeps the form."""
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    candidates = candidates_in_play(access.project, include_all=True)
    choices = candidate_choices(candidates)
    limit = settings.API_MAX_BODY_BYTES
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > limit + 64 * 1024:  # refused before a byte of the upload is read
        form = ProbeUploadForm.refused(
            _("The upload is over the %(mb)s MB limit.") % {"mb": limit >> 20}, candidates=choices
        )
        return _probes_page(request, access, form=form, status=413)
    try:
        form = ProbeUploadForm(request.POST, request.FILES, candidates=choices)
        valid = form.is_valid()
    except RequestDataTooBig:
        form = ProbeUploadForm.refused(
            _("The pasted text is too long: upload it as a file instead."), candidates=choices
        )
        return _probes_page(request, access, form=form, status=413)
    recorded = _upload_recorded(request, access, form, candidates) if valid else None
    if recorded is None:
        return _probes_page(request, access, form=form, status=422)
    messages.success(
        request,
        ngettext(
            "Probe output stored: %(gpus)s GPU, %(verdict)s.",
            "Probe output stored: %(gpus)s GPUs, %(verdict)s.",
            recorded.run.gpu_count,
        )
        % {"gpus": recorded.run.gpu_count, "verdict": recorded.run.get_verdict_display()},
    )
    return redirect("poc:probe_run", slug=slug, run_id=recorded.run.pk)


def _upload_recorded(
    request: AuthedHttpRequest,
    access: evaluation_selectors.ProjectAccess,
    form: ProbeUploadForm,
    candidates: list[Candidate],
) -> probe_services.ProbeRecorded | None:
    """Read and store a valid upload form's output; None, with the reason on the form, when
    the file is too large or the output cannot be read."""
    limit = settings.API_MAX_BODY_BYTES
    upload = form.cleaned_data["file"]
    if upload is not None and upload.size > limit:
        form.add_error("file", _("The file is over the %(mb)s MB limit.") % {"mb": limit >> 20})
        return None
    candidate = next(c for c in candidates if c.slug == form.cleaned_data["candidate"])
    data = upload.read() if upload is not None else form.cleaned_data["text"]
    name = upload.name if upload is not None else _("pasted output")
    try:
        nodes = probe_services.nodes_from_text(
            data,
            name=name,
            host=form.cleaned_data["host"].strip(),
            expected_gpus=form.cleaned_data["expected_gpus"],
        )
        return probe_services.probe_record(
            project=access.project,
            candidate=candidate,
            source=ProbeSource.UPLOAD,
            nodes=nodes,
            actor=request.user,
        )
    except probe_services.ProbeInputError as exc:
        form.add_error("file" if upload is not None else "text", str(exc))
        return None


@login_required
def probe_run(request: AuthedHttpRequest, slug: str, run_id: int) -> HttpResponse:
    """A probe run: each node's GPUs with health, benchmark bars, raw outputs, results."""
    access = evaluation_selectors.project_access(request.user, slug)
    run = selectors.probe_run_for_project(access.project, run_id)
    active = run.status in (ProbeStatus.QUEUED, ProbeStatus.RUNNING)
    if request.htmx and request.GET.get("part") == "progress":
        if not active:  # finished since the page was drawn: draw it whole
            response = HttpResponse(status=204)
            response["HX-Refresh"] = "true"
            return response
        return render(
            request,
            "poc/probe_run.html#progress",
            {"access": access, "project": access.project, "run": run, "active": active},
        )
    nodes = [_node_shown(node, run) for node in run.nodes.all()]
    return render(
        request,
        "probes/probe_run.html",
        {
            "access": access,
            "project": access.project,
            "tab": "probes",
            "run": run,
            "active": active,
            "nodes": nodes,
            "results": recording.run_results(run),
            "cluster": present.cluster_summary(run.cluster_facts),
            "documents": _documents_shown(run),
        },
    )


def _documents_shown(run: ProbeRun) -> list[dict[str, object]]:
    """The documents an offline run was read from, with what each was read as."""
    if run.source != ProbeSource.DOCUMENTS:
        return []
    facts = run.cluster_facts if isinstance(run.cluster_facts, dict) else {}
    kinds: dict[str, list[str]] = {}
    for piece in facts.get("documents") or []:
        if isinstance(piece, dict):
            kinds.setdefault(str(piece.get("name")), []).append(str(piece.get("kind") or ""))
    return [
        {"output": o, "kinds": kinds.get(o.name, [])}
        for o in run.outputs.all()
        if o.node_id is None
    ]


def _node_shown(node: ProbeNode, run: ProbeRun) -> dict[str, object]:
    """A node of a run as its page shows it: health (judged in the reader's language), GPU
    rows and benchmark bars, unless the node could not be read; its raw outputs."""
    outputs = [o for o in run.outputs.all() if o.node_id == node.pk]
    if node.error:
        return {
            "node": node,
            "facts": node.facts,
            "health": {},
            "gpus": [],
            "bars": [],
            "outputs": outputs,
        }
    judged = health.judge_node(node.facts)
    return {
        "node": node,
        "facts": node.facts,
        "health": judged,
        "gpus": present.gpu_rows(node.facts, judged),
        "bars": present.benchmark_bars(node.facts),
        "outputs": outputs,
    }


def _binding_saved(
    request: AuthedHttpRequest, action: AcceptanceAction, form: ProbeBindingForm
) -> bool:
    try:
        probe_services.probe_binding_set(
            action=action,
            check=form.cleaned_data["check"],
            params=form.cleaned_data["params"],
            actor=request.user,
        )
    except ValidationError as exc:
        form_add_service_error(form, exc)
        return False
    return True


@login_required
def probe_output(request: AuthedHttpRequest, slug: str, output_id: int) -> HttpResponse:
    """A raw output as plain text (never rendered as a page of ours); `?download=1` saves it."""
    access = evaluation_selectors.project_access(request.user, slug)
    output = selectors.probe_output_for_project(access.project, output_id)
    if not output.file:
        raise Http404
    try:
        with output.file.open("rb") as handle:
            data = handle.read()
    except (FileNotFoundError, OSError):
        raise Http404 from None
    response = HttpResponse(data, content_type="text/plain; charset=utf-8")
    filename = present.output_filename(output.name)
    disposition = "attachment" if request.GET.get("download") else "inline"
    response["Content-Disposition"] = f'{disposition}; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response


@login_required
def probe_agent(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """How to run the push agent on a node: download it, then one command."""
    access = evaluation_selectors.project_access(request.user, slug)
    candidates = candidates_in_play(access.project, include_all=True)
    return render(
        request,
        "probes/probe_agent.html",
        {
            "access": access,
            "project": access.project,
            "tab": "probes",
            "candidates": candidates,
            "base_url": request.build_absolute_uri("/").rstrip("/"),
            "agent_version": probe_agent_module.VERSION,
        },
    )


def agent_download(request: AuthedHttpRequest) -> HttpResponse:
    """The push agent as one standard-library file (public: it holds no secret)."""
    source = Path(probe_agent_module.__file__).read_bytes()
    response = HttpResponse(source, content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="workbench-probe.py"'
    return response


@login_required
def probe_checks(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """Which acceptance actions probes judge, with which check; and the check catalogue."""
    access = evaluation_selectors.project_access(request.user, slug)
    rows = []
    for action, explicit, template_check in selectors.probe_bindings_for_project(access.project):
        check, params, origin = present.current_binding(explicit, template_check)
        rows.append(
            {
                "action": action,
                "check": check,
                "params": params,
                "origin": origin,
                "statement": checks.describe(check, params) if check else "",
            }
        )
    return render(
        request,
        "probes/probe_checks.html",
        {
            "access": access,
            "project": access.project,
            "tab": "probes",
            "rows": rows,
            "catalogue": present.catalogue(),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def probe_check_edit(request: AuthedHttpRequest, slug: str, action_id: int) -> HttpResponse:
    """Bind one action to a check (or unbind it, or go back to its template's check)."""
    access = evaluation_selectors.project_access(request.user, slug, write=request.method == "POST")
    action = evaluation_selectors.action_for_project(access.project, action_id)
    choices = [(c["key"], c["label"]) for c in present.catalogue()]
    if request.method == "POST" and FlagForm("reset", request.POST).set:
        probe_services.probe_binding_reset(action=action, actor=request.user)
        messages.success(request, _("The action follows its template's check again."))
        return redirect("poc:probe_checks", slug=slug)
    form = ProbeBindingForm(request.POST or None, checks=choices)
    if request.method == "POST" and form.is_valid() and _binding_saved(request, action, form):
        messages.success(request, _("Saved."))
        return redirect("poc:probe_checks", slug=slug)
    if request.method == "GET":
        check, params, _origin = present.current_binding(*selectors.probe_binding_of(action))
        form = ProbeBindingForm(
            initial={"check": check, "params": json.dumps(params) if check else ""},
            checks=choices,
        )
    return render(
        request,
        "probes/probe_check_edit.html",
        {
            "access": access,
            "project": access.project,
            "tab": "probes",
            "action": action,
            "form": form,
            "catalogue": present.catalogue(),
        },
        status=422 if form.errors else 200,
    )
