"""The page for cluster documents: what the admins of a cluster the workbench cannot reach save
with kubectl or Slurm's commands, how to produce it, and its upload, stored as a probe run of a
candidate and optionally of one of its clusters."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from evaluations import selectors as evaluation_selectors
from evaluations.models import Candidate
from evaluations.selectors import candidates_in_play
from poc.probes import selectors
from poc.probes.connectors import slurm
from poc.probes.forms import ClusterDocumentsForm
from poc.probes.models import Cluster, ClusterKind
from poc.probes.services import documents as document_services
from poc.probes.services.probes import ProbeInputError, ProbeRecorded
from poc.probes.views.probes import candidate_choices
from workbench.typing import AuthedHttpRequest

_DOCUMENT_KINDS = (ClusterKind.KUBERNETES, ClusterKind.SLURM_REST, ClusterKind.SLURM_SSH)


type Choices = tuple[list[tuple[str, str]], list[tuple[str, str]]]


def _choices(candidates: list[Candidate], clusters: list[Cluster]) -> Choices:
    """The form's choices: the candidates, and the clusters documents may describe."""
    return candidate_choices(candidates), [
        (str(c.pk), f"{c.name} · {c.candidate.slug} · {c.get_kind_display()}")
        for c in clusters
        if c.kind in _DOCUMENT_KINDS
    ]


def _documents_page(
    request: AuthedHttpRequest,
    access: evaluation_selectors.ProjectAccess,
    form: ClusterDocumentsForm | None,
    status: int = 200,
) -> HttpResponse:
    return render(
        request,
        "probes/probe_documents.html",
        {
            "access": access,
            "project": access.project,
            "tab": "probes",
            "form": form if access.can_write else None,
            "limit_mb": settings.API_MAX_BODY_BYTES // 1_048_576,
            "sinfo_command": slurm.SINFO_COMMAND,
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def probe_documents(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """GET: which documents are read and how to produce them, and the upload form. POST: store
    uploaded or pasted documents for one candidate; bad input keeps the form, stores nothing."""
    post = request.method == "POST"
    access = evaluation_selectors.project_access(request.user, slug, write=post)
    candidates = candidates_in_play(access.project, include_all=True)
    clusters = list(selectors.clusters_for_project(access.project))
    choices = _choices(candidates, clusters)
    if not post:
        form = ClusterDocumentsForm(candidates=choices[0], clusters=choices[1])
        return _documents_page(request, access, form)
    form = _bound_form(request, choices)
    if form.errors and not form.is_bound:  # refused before it was read: too large
        return _documents_page(request, access, form, status=413)
    recorded = _recorded(request, access, form, candidates, clusters) if form.is_valid() else None
    if recorded is None:
        return _documents_page(request, access, form, status=422)
    messages.success(
        request,
        _("Cluster documents stored: %(nodes)s GPU nodes, %(gpus)s GPUs.")
        % {"nodes": recorded.run.node_count, "gpus": recorded.run.gpu_count},
    )
    return redirect("poc:probe_run", slug=slug, run_id=recorded.run.pk)


def _bound_form(request: AuthedHttpRequest, choices: Choices) -> ClusterDocumentsForm:
    """The posted form, or an unbound one carrying why the upload was refused unread."""
    limit = settings.API_MAX_BODY_BYTES
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > limit + 64 * 1024:  # refused before a byte of the upload is read
        message = _("The upload is over the %(mb)s MB limit.") % {"mb": limit >> 20}
        return ClusterDocumentsForm.refused(message, candidates=choices[0], clusters=choices[1])
    try:
        form = ClusterDocumentsForm(
            request.POST, request.FILES, candidates=choices[0], clusters=choices[1]
        )
        form.is_valid()
    except RequestDataTooBig:
        message = _("The pasted text is too long: upload it as a file instead.")
        return ClusterDocumentsForm.refused(message, candidates=choices[0], clusters=choices[1])
    return form


def _recorded(
    request: AuthedHttpRequest,
    access: evaluation_selectors.ProjectAccess,
    form: ClusterDocumentsForm,
    candidates: list[Candidate],
    clusters: list[Cluster],
) -> ProbeRecorded | None:
    """Read and store a valid form's documents; None, with the reason on the form, when they
    are too large or cannot be read."""
    limit = settings.API_MAX_BODY_BYTES
    uploads = form.cleaned_data["documents"]
    if sum(upload.size for upload in uploads) > limit:
        message = _("The files are over the %(mb)s MB limit.") % {"mb": limit >> 20}
        form.add_error("documents", message)
        return None
    candidate = next(c for c in candidates if c.slug == form.cleaned_data["candidate"])
    cluster_id = form.cleaned_data["cluster"]
    cluster = next((c for c in clusters if str(c.pk) == cluster_id), None)
    documents: list[tuple[str, bytes | str]] = [(u.name, u.read()) for u in uploads] or [
        (_("pasted documents"), form.cleaned_data["text"])
    ]
    try:
        return document_services.cluster_documents_record(
            project=access.project,
            candidate=candidate,
            cluster=cluster,
            documents=documents,
            actor=request.user,
        )
    except ProbeInputError as exc:
        form.add_error("documents" if uploads else "text", str(exc))
        return None
