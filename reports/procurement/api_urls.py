"""The procurement API's routes (mounted under /api/v1/ by workbench/urls.py)."""

from django.urls import path

from reports.procurement import api, api_compatibility, api_costs

urlpatterns = [
    path("projects/<slug:slug>/terms/", api.TermsApi.as_view(), name="api_terms"),
    path(
        "projects/<slug:slug>/candidates/<slug:candidate_slug>/terms/",
        api.CandidateTermsApi.as_view(),
        name="api_candidate_terms",
    ),
    path("projects/<slug:slug>/costs/", api.CostsApi.as_view(), name="api_costs"),
    path(
        "projects/<slug:slug>/compatibility/",
        api_compatibility.CompatibilityApi.as_view(),
        name="api_compatibility",
    ),
    path(
        "projects/<slug:slug>/compatibility/claims/",
        api_compatibility.CompatibilityClaimsApi.as_view(),
        name="api_compatibility_claims",
    ),
    path(
        "projects/<slug:slug>/costs/model/",
        api_costs.CostModelApi.as_view(),
        name="api_cost_model",
    ),
    path(
        "projects/<slug:slug>/costs/lines/",
        api_costs.CostLinesApi.as_view(),
        name="api_cost_lines",
    ),
    path(
        "projects/<slug:slug>/costs/lines/<int:line_id>/",
        api_costs.CostLineApi.as_view(),
        name="api_cost_line",
    ),
]
