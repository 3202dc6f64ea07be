from django.urls import path

from poc.views import clusters, probes
from poc.views import results as views

app_name = "poc"

urlpatterns = [
    path("<slug:slug>/matrix/", views.matrix, name="matrix"),
    path(
        "<slug:slug>/matrix/cell/<slug:candidate_slug>/<int:action_id>/",
        views.cell,
        name="cell",
    ),
    path("<slug:slug>/results/<int:result_id>/evidence/", views.evidence_add, name="evidence_add"),
    path(
        "<slug:slug>/evidence/<int:evidence_id>/download/",
        views.evidence_download,
        name="evidence_download",
    ),
    path("<slug:slug>/comparison/", views.comparison, name="comparison"),
    path(
        "<slug:slug>/comparison/<slug:candidate_slug>/list/<slug:outcome>/",
        views.comparison_list,
        name="comparison_list",
    ),
    path("<slug:slug>/integration/", views.integration_gaps, name="integration_gaps"),
    path("<slug:slug>/responsibilities/", views.responsibilities, name="responsibilities"),
    path(
        "<slug:slug>/comparison/<slug:candidate_slug>/responsibility/<slug:area>/",
        views.responsibility_edit,
        name="responsibility_edit",
    ),
    path(
        "<slug:slug>/comparison/<slug:candidate_slug>/boundaries/",
        views.boundary_edit,
        name="boundary_edit",
    ),
    path("<slug:slug>/ci/tokens/", views.tokens, name="tokens"),
    path("<slug:slug>/ci/tokens/<int:token_id>/revoke/", views.token_revoke, name="token_revoke"),
    path("<slug:slug>/ci/runs/", views.runs, name="runs"),
    path("<slug:slug>/ci/runs/<int:ci_run_id>/", views.run_detail, name="run_detail"),
    path("<slug:slug>/probes/", probes.probes, name="probes"),
    path("<slug:slug>/probes/upload/", probes.probe_upload, name="probe_upload"),
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
