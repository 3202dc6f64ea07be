"""The sheets API's routes."""

from django.urls import path

from reports.api import views as sheet_api

urlpatterns = [
    path("projects/<slug:slug>/sheets/", sheet_api.SheetCreateApi.as_view(), name="api_sheets"),
    path("sheets/verify/", sheet_api.SheetVerifyApi.as_view(), name="api_sheet_verify"),
    path("sheets/<int:sheet_id>/", sheet_api.SheetDetailApi.as_view(), name="api_sheet"),
    path("sheets/<int:sheet_id>/pdf", sheet_api.SheetPdfApi.as_view(), name="api_sheet_pdf"),
    path(
        "sheets/<int:sheet_id>/acknowledge/",
        sheet_api.SheetAcknowledgeApi.as_view(),
        name="api_sheet_acknowledge",
    ),
    path(
        "sheets/<int:sheet_id>/signoffs/",
        sheet_api.SignOffCreateApi.as_view(),
        name="api_signoffs",
    ),
]
