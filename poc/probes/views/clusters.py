"""Browser pages of registered clusters: register and edit (secrets write-only), test the
connection and pin host keys, start, watch and cancel probe runs."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from evaluations import selectors as evaluation_selectors
from evaluations.selectors import candidates_in_play
from poc.probes import credentials, selectors
from poc.probes.forms import ClusterForm, FlagForm, HostKeyConfirmForm
from poc.probes.models import (
    Cluster,
    ClusterKind,
    ProbeStatus,
)
from poc.probes.services import clusters as cluster_services
from workbench.forms import form_add_service_error
from workbench.typing import AuthedHttpRequest

ACTIVE = (ProbeStatus.QUEUED, ProbeStatus.RUNNING)


def _candidates(access: evaluation_selectors.ProjectAccess) -> list[tuple[str, str]]:
    return [
        (c.slug, f"{c.solution.name} ({c.slug})")
        for c in candidates_in_play(access.project, include_all=True)
    ]


def _data(
    form: ClusterForm, access: evaluation_selectors.ProjectAccess
) -> cluster_services.ClusterData:
    data = form.cleaned_data
    candidate = evaluation_selectors.candidate_for_project(access.project, data["candidate"])
    return cluster_services.ClusterData(
        name=data["name"],
        kind=data["kind"],
        candidate=candidate,
        hosts=data["hosts"],
        ssh_user=data["ssh_user"],
        ssh_port=data["ssh_port"] or 22,
        api_url=data["api_url"],
        slurm_user=data["slurm_user"],
        expected_gpus_per_node=data["expected_gpus_per_node"],
        controlled_failures=data["controlled_failures"],
        failure_namespace=data["failure_namespace"],
        schedule_minutes=data["schedule_minutes"],
    )


@login_required
def clusters(request: AuthedHttpRequest, slug: str) -> HttpResponse:
    """The project's clusters and the latest run of each."""
    access = evaluation_selectors.project_access(request.user, slug)
    return render(
        request,
        "probes/clusters.html",
        {
            "access": access,
            "project": access.project,
            "tab": "probes",
            "clusters": selectors.clusters_for_project(access.project),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def cluster_edit(
    request: AuthedHttpRequest, slug: str, cluster_id: int | None = None
) -> HttpResponse:
    """Register a cluster, or change one; secrets are never shown back, only their summary."""
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    cluster = selectors.cluster_for_project(access.project, cluster_id) if cluster_id else None
    stored = cluster.secret_summary if cluster else {}
    initial = None
    if cluster is not None and request.method == "GET":
        initial = {name: getattr(cluster, name) for name in EDITED_FIELDS}
        initial["candidate"] = cluster.candidate.slug
    form = ClusterForm(
        request.POST or None,
        initial=initial,
        candidates=_candidates(access),
        stored=stored,
    )
    saved = _cluster_saved(request, access, form, cluster) if request.method == "POST" else None
    if saved is not None:
        messages.success(request, _("Cluster saved."))
        return redirect("poc:cluster", slug=slug, cluster_id=saved.pk)
    return render(
        request,
        "probes/cluster_edit.html",
        {
            "access": access,
            "project": access.project,
            "tab": "probes",
            "cluster": cluster,
            "form": form,
            "kinds": ClusterKind,
        },
        status=422 if form.errors else 200,
    )


# The cluster's fields an edit form starts from (its candidate by slug; secrets never).
EDITED_FIELDS = (
    "name",
    "kind",
    "hosts",
    "ssh_user",
    "ssh_port",
    "api_url",
    "slurm_user",
    "expected_gpus_per_node",
    "schedule_minutes",
    "controlled_failures",
    "failure_namespace",
)


def _cluster_saved(
    request: AuthedHttpRequest,
    access: evaluation_selectors.ProjectAccess,
    form: ClusterForm,
    cluster: Cluster | None,
) -> Cluster | None:
    """Save a valid form's cluster; None, with the reason on the form, when refused."""
    if not form.is_valid():
        return None
    try:
        return cluster_services.cluster_save(
            project=access.project,
            data=_data(form, access),
            secrets=form.secrets(),
            clear=tuple(form.cleaned_data["clear_secrets"]),
            actor=request.user,
            cluster=cluster,
        )
    except ValidationError as exc:
        form_add_service_error(form, exc)
    except credentials.CredentialsUnavailable as exc:
        form.add_error(None, _("Credentials cannot be stored: %(e)s") % {"e": exc})
    return None


def _detail(
    request: AuthedHttpRequest,
    access: evaluation_selectors.ProjectAccess,
    cluster: Cluster,
    *,
    checks: list[cluster_services.NodeCheck] | None = None,
    status: int = 200,
) -> HttpResponse:
    runs = selectors.cluster_runs(cluster)
    context = {
        "access": access,
        "project": access.project,
        "tab": "probes",
        "cluster": cluster,
        "nodes": cluster.node_addresses() if cluster.uses_ssh else [],
        "host_keys": sorted(cluster.host_keys.items()),
        "runs": runs,
        "active": any(run.status in ACTIVE for run in runs),
        "checks": checks,
        "confirmable": [c for c in checks or [] if c.state in ("new", "changed")],
        "planned": selectors.planned_objects(cluster),
    }
    if request.htmx and request.GET.get("part") == "runs":
        return render(request, "poc/cluster.html#runs", context)
    return render(request, "probes/cluster.html", context, status=status)


@login_required
def cluster(request: AuthedHttpRequest, slug: str, cluster_id: int) -> HttpResponse:
    """A cluster: how it is reached, its pinned host keys, its runs (live while one runs)."""
    access = evaluation_selectors.project_access(request.user, slug)
    found = selectors.cluster_for_project(access.project, cluster_id)
    cluster_services.probe_runs_recover()
    return _detail(request, access, found)


@login_required
@require_POST
def cluster_test(request: AuthedHttpRequest, slug: str, cluster_id: int) -> HttpResponse:
    """Reach each node and show the host key fingerprints to confirm."""
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    found = selectors.cluster_for_project(access.project, cluster_id)
    checks = cluster_services.cluster_test_connection(cluster=found, actor=request.user)
    return _detail(request, access, found, checks=checks)


@login_required
@require_POST
def cluster_pin(request: AuthedHttpRequest, slug: str, cluster_id: int) -> HttpResponse:
    """Pin the host keys whose fingerprints the person confirmed."""
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    found = selectors.cluster_for_project(access.project, cluster_id)
    confirmed = HostKeyConfirmForm(request.POST, nodes=list(found.seen_host_keys)).confirmed()
    try:
        pinned = cluster_services.cluster_confirm_host_keys(
            cluster=found, fingerprints=confirmed, actor=request.user
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Host keys pinned: %(nodes)s") % {"nodes": ", ".join(pinned)})
    return redirect("poc:cluster", slug=slug, cluster_id=found.pk)


@login_required
@require_POST
def cluster_run(request: AuthedHttpRequest, slug: str, cluster_id: int) -> HttpResponse:
    """Start a probe run (with the controlled failures when asked and enabled)."""
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    found = selectors.cluster_for_project(access.project, cluster_id)
    try:
        run = cluster_services.probe_run_start(
            cluster=found,
            actor=request.user,
            with_failures=FlagForm("failures", request.POST).set,
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("poc:cluster", slug=slug, cluster_id=found.pk)
    return redirect("poc:probe_run", slug=slug, run_id=run.pk)


@login_required
@require_POST
def cluster_delete(request: AuthedHttpRequest, slug: str, cluster_id: int) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    found = selectors.cluster_for_project(access.project, cluster_id)
    cluster_services.cluster_delete(cluster=found, actor=request.user)
    messages.success(request, _("Cluster removed; its probe runs are kept."))
    return redirect("poc:clusters", slug=slug)


@login_required
@require_POST
def probe_run_cancel(request: AuthedHttpRequest, slug: str, run_id: int) -> HttpResponse:
    access = evaluation_selectors.project_access(request.user, slug, write=True)
    run = selectors.probe_run_for_project(access.project, run_id)
    cluster_services.probe_run_cancel(run=run, actor=request.user)
    return redirect("poc:probe_run", slug=slug, run_id=run.pk)
