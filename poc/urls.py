from django.urls import path

from poc.probes import urls as probe_urls
from poc.views import lists
from poc.views import responsibilities as responsibility_views
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
    path("<slug:slug>/results/", lists.results, name="results"),
    path("<slug:slug>/actions/", lists.actions, name="actions"),
    path("<slug:slug>/integration/", lists.integration_gaps, name="integration_gaps"),
    path(
        "<slug:slug>/responsibilities/",
        responsibility_views.responsibilities,
        name="responsibilities",
    ),
    path(
        "<slug:slug>/responsibilities/assign/",
        responsibility_views.responsibilities_assign,
        name="responsibilities_assign",
    ),
    path(
        "<slug:slug>/comparison/<slug:candidate_slug>/responsibility/<slug:area>/",
        views.responsibility_edit,
        name="responsibility_edit",
    ),
    path("<slug:slug>/ci/tokens/", views.tokens, name="tokens"),
    path("<slug:slug>/ci/tokens/<int:token_id>/revoke/", views.token_revoke, name="token_revoke"),
    path("<slug:slug>/ci/runs/", lists.runs, name="runs"),
    path("<slug:slug>/ci/runs/<int:ci_run_id>/", views.run_detail, name="run_detail"),
]

# GPU evidence (its own app) answers under the same namespace: poc:probes, poc:cluster, ...
urlpatterns += probe_urls.urlpatterns
