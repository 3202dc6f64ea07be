from django.urls import path

from poc.probes.api import clusters, documents, probes

urlpatterns = [
    path(
        "projects/<slug:slug>/probes/",
        probes.ProbeListCreateApi.as_view(),
        name="api_probes",
    ),
    path(
        "projects/<slug:slug>/probes/documents/",
        documents.ClusterDocumentsApi.as_view(),
        name="api_probe_documents",
    ),
    path("probes/<int:run_id>/", probes.ProbeDetailApi.as_view(), name="api_probe_detail"),
    path("projects/<slug:slug>/clusters/", clusters.ClusterListApi.as_view(), name="api_clusters"),
    path(
        "clusters/<int:cluster_id>/runs/", clusters.ClusterRunApi.as_view(), name="api_cluster_run"
    ),
]
