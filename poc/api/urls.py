from django.urls import path

from poc.api import views
from poc.probes.api import urls as probe_api_urls

urlpatterns = [
    path("projects/<slug:slug>/matrix/", views.MatrixApi.as_view(), name="api_matrix"),
    path(
        "projects/<slug:slug>/results/",
        views.ResultBulkCreateApi.as_view(),
        name="api_results_create",
    ),
    path("projects/<slug:slug>/junit/", views.JUnitImportApi.as_view(), name="api_junit_import"),
    path(
        "results/<int:result_id>/evidence/",
        views.EvidenceCreateApi.as_view(),
        name="api_evidence_create",
    ),
    path("runs/<int:run_id>/", views.RunDetailApi.as_view(), name="api_run_detail"),
]
urlpatterns += probe_api_urls.urlpatterns
