"""Pages of GPU evidence: probe runs, uploads, the agent, check bindings and clusters. Included by
poc/urls.py, so that their names stay in the `poc` namespace."""

from django.urls import path

from poc.probes.views import clusters, documents, probes

urlpatterns = [
    path("<slug:slug>/probes/", probes.probes, name="probes"),
    path("<slug:slug>/probes/upload/", probes.probe_upload, name="probe_upload"),
    path("<slug:slug>/probes/documents/", documents.probe_documents, name="probe_documents"),
    path("<slug:slug>/probes/agent/", probes.probe_agent, name="probe_agent"),
    path("<slug:slug>/probes/checks/", probes.probe_checks, name="probe_checks"),
    path(
        "<slug:slug>/probes/checks/<int:action_id>/",
        probes.probe_check_edit,
        name="probe_check_edit",
    ),
    path("<slug:slug>/probes/<int:run_id>/", probes.probe_run, name="probe_run"),
    path("<slug:slug>/probes/<int:run_id>/cancel/", clusters.probe_run_cancel, name="probe_cancel"),
    path("<slug:slug>/clusters/", clusters.clusters, name="clusters"),
    path("<slug:slug>/clusters/new/", clusters.cluster_edit, name="cluster_new"),
    path("<slug:slug>/clusters/<int:cluster_id>/", clusters.cluster, name="cluster"),
    path("<slug:slug>/clusters/<int:cluster_id>/edit/", clusters.cluster_edit, name="cluster_edit"),
    path("<slug:slug>/clusters/<int:cluster_id>/test/", clusters.cluster_test, name="cluster_test"),
    path("<slug:slug>/clusters/<int:cluster_id>/pin/", clusters.cluster_pin, name="cluster_pin"),
    path("<slug:slug>/clusters/<int:cluster_id>/run/", clusters.cluster_run, name="cluster_run"),
    path(
        "<slug:slug>/clusters/<int:cluster_id>/delete/",
        clusters.cluster_delete,
        name="cluster_delete",
    ),
    path(
        "<slug:slug>/probes/outputs/<int:output_id>/",
        probes.probe_output,
        name="probe_output",
    ),
]
