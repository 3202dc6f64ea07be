"""The evaluations API, mounted under /api/v1/ by the root URLconf."""

from django.urls import path

from evaluations.api import views

urlpatterns = [
    path("projects/", views.ProjectListApi.as_view(), name="api_project_list"),
    path("projects/<slug:slug>/", views.ProjectDetailApi.as_view(), name="api_project_detail"),
    path(
        "projects/<slug:slug>/candidates/",
        views.CandidateListApi.as_view(),
        name="api_candidate_list",
    ),
    path("projects/<slug:slug>/actions/", views.ActionListApi.as_view(), name="api_action_list"),
]
