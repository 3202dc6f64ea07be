from django.urls import path

from poc.api import clusters, probes, views

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
    path(
        "projects/<slug:slug>/probes/",
        probes.ProbeListCreateApi.as_view(),
        name="api_probes",
    ),
    path("probes/<int:run_id>/", probes.ProbeDetailApi.as_view(), name="api_probe_detail"),
    path("projects/<slug:slug>/clusters/", clusters.ClusterListApi.as_view(), name="api_clusters"),
    path(
        "clusters/<int:cluster_id>/runs/", clusters.ClusterRunApi.as_view(), name="api_cluster_run"
    ),
]
