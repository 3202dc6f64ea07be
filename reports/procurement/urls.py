from django.urls import path

from reports.procurement.views import compatibility, costs, terms

app_name = "procurement"

urlpatterns = [
    path("<slug:slug>/terms/", terms.terms, name="terms"),
    path(
        "<slug:slug>/terms/<slug:candidate_slug>/<slug:group>/",
        terms.terms_edit,
        name="terms_edit",
    ),
    path(
        "<slug:slug>/terms/<slug:candidate_slug>/history/<slug:key>/",
        terms.term_history,
        name="term_history",
    ),
    path("<slug:slug>/to-confirm/", terms.to_confirm, name="to_confirm"),
    path(
        "<slug:slug>/to-confirm/<slug:candidate_slug>/<slug:key>/",
        terms.confirmation_edit,
        name="confirmation_edit",
    ),
    path("<slug:slug>/compatibility/", compatibility.compatibility, name="compatibility"),
    path(
        "<slug:slug>/compatibility/claim/",
        compatibility.compatibility_claim,
        name="compatibility_claim",
    ),
    path("<slug:slug>/costs/", costs.costs, name="costs"),
    path("<slug:slug>/costs/model/", costs.cost_model_edit, name="cost_model_edit"),
    path("<slug:slug>/costs/cheapest/", costs.cost_cheapest, name="cost_cheapest"),
    path("<slug:slug>/costs/import/", costs.cost_lines_import, name="cost_lines_import"),
    path(
        "<slug:slug>/costs/import/template.csv",
        costs.cost_lines_template,
        name="cost_lines_template",
    ),
    path(
        "<slug:slug>/costs/baseline-lines/new/",
        costs.cost_line_add,
        name="baseline_line_add",
    ),
    path(
        "<slug:slug>/costs/<slug:candidate_slug>/lines/new/",
        costs.cost_line_add,
        name="cost_line_add",
    ),
    path(
        "<slug:slug>/costs/lines/<int:line_id>/remove/",
        costs.cost_line_remove,
        name="cost_line_remove",
    ),
]
