from django.urls import path

from reports import views

app_name = "reports"

urlpatterns = [
    path("projects/<slug:slug>/sheets/", views.sheets, name="sheets"),
    path("projects/<slug:slug>/progress/", views.progress, name="progress"),
    path("projects/<slug:slug>/sheets/roles/", views.sheet_roles, name="sheet_roles"),
    path("projects/<slug:slug>/sheets/freeze/", views.sheet_freeze, name="sheet_freeze"),
    path(
        "projects/<slug:slug>/sheets/recommendation/",
        views.sheet_recommendation,
        name="sheet_recommendation",
    ),
    path("projects/<slug:slug>/sheets/<int:revision>/", views.sheet, name="sheet"),
    path("projects/<slug:slug>/sheets/<int:revision>/pdf/", views.sheet_pdf, name="sheet_pdf"),
    path(
        "projects/<slug:slug>/sheets/<int:revision>/retry/", views.sheet_retry, name="sheet_retry"
    ),
    path(
        "projects/<slug:slug>/sheets/<int:revision>/acknowledge/",
        views.sheet_acknowledge,
        name="sheet_acknowledge",
    ),
    path(
        "projects/<slug:slug>/sheets/<int:revision>/withdraw/",
        views.sheet_withdraw,
        name="sheet_withdraw",
    ),
    path("projects/<slug:slug>/export/<slug:table>.<str:fmt>", views.export, name="export"),
    path(
        "projects/<slug:slug>/sheets/<int:revision>/export/<slug:table>.<str:fmt>",
        views.sheet_export,
        name="sheet_export",
    ),
    path("sheets/verify/", views.verify, name="verify"),
]
