from django.urls import path

from reports.procurement import views

app_name = "procurement"

urlpatterns = [
    path("<slug:slug>/terms/", views.terms, name="terms"),
    path(
        "<slug:slug>/terms/<slug:candidate_slug>/<slug:group>/",
        views.terms_edit,
        name="terms_edit",
    ),
    path(
        "<slug:slug>/terms/<slug:candidate_slug>/history/<slug:key>/",
        views.term_history,
        name="term_history",
    ),
    path("<slug:slug>/to-confirm/", views.to_confirm, name="to_confirm"),
    path(
        "<slug:slug>/to-confirm/<slug:candidate_slug>/<slug:key>/",
        views.confirmation_edit,
        name="confirmation_edit",
    ),
]
