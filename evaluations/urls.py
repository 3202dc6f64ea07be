from django.urls import path

from evaluations.views import projects as views
from evaluations.views import suite

app_name = "evaluations"

urlpatterns = [
    path("", views.project_list, name="project_list"),
    path("new/", views.project_create, name="project_create"),
    path("<slug:slug>/", views.project_detail, name="project_detail"),
    path("<slug:slug>/framing/", views.project_framing, name="project_framing"),
    path("<slug:slug>/members/", views.project_members, name="project_members"),
    path("<slug:slug>/members/people/", views.people_lookup, name="people_lookup"),
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

urlpatterns += [
    path("<slug:slug>/requirements/", suite.suite, name="suite"),
    path("<slug:slug>/requirements/claims/", suite.claims_paste, name="claims_paste"),
    path(
        "<slug:slug>/requirements/claims/suggest/",
        suite.claims_suggest,
        name="claims_suggest",
    ),
    path("<slug:slug>/requirements/import/", suite.suite_import, name="suite_import"),
    path(
        "<slug:slug>/requirements/export.<str:fmt>",
        suite.suite_export,
        name="suite_export",
    ),
    path(
        "<slug:slug>/requirements/<int:requirement_id>/",
        suite.requirement_detail,
        name="requirement_detail",
    ),
    path(
        "<slug:slug>/requirements/<int:requirement_id>/delete/",
        suite.requirement_delete,
        name="requirement_delete",
    ),
    path(
        "<slug:slug>/requirements/<int:requirement_id>/move/",
        suite.requirement_move,
        name="requirement_move",
    ),
    path(
        "<slug:slug>/requirements/<int:requirement_id>/actions/add/",
        suite.action_add,
        name="action_add",
    ),
    path("<slug:slug>/actions/<int:action_id>/", suite.action_detail, name="action_detail"),
    path("<slug:slug>/actions/<int:action_id>/delete/", suite.action_delete, name="action_delete"),
    path("<slug:slug>/actions/<int:action_id>/move/", suite.action_move, name="action_move"),
    path("<slug:slug>/templates/", suite.template_list, name="template_list"),
    path("<slug:slug>/templates/<slug:set_key>/", suite.template_apply, name="template_apply"),
]
