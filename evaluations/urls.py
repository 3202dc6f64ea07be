from django.urls import path

from evaluations import views

app_name = "evaluations"

urlpatterns = [
    path("", views.project_list, name="project_list"),
    path("new/", views.project_create, name="project_create"),
    path("<slug:slug>/", views.project_detail, name="project_detail"),
    path("<slug:slug>/framing/", views.project_framing, name="project_framing"),
    path("<slug:slug>/members/", views.project_members, name="project_members"),
    path(
        "<slug:slug>/members/<int:membership_id>/remove/",
        views.member_remove,
        name="member_remove",
    ),
    path("<slug:slug>/history/", views.project_history, name="project_history"),
    path("<slug:slug>/candidates/add/", views.candidate_add, name="candidate_add"),
    path(
        "<slug:slug>/candidates/<slug:candidate_slug>/",
        views.candidate_update,
        name="candidate_update",
    ),
    path(
        "<slug:slug>/candidates/<slug:candidate_slug>/remove/",
        views.candidate_remove,
        name="candidate_remove",
    ),
]
