from typing import Any

from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from workbench import views
from workbench.metrics import metrics_view

# The split view serves swagger-ui's start-up script as a file: no inline script. The vendored
# swagger-ui adds one <style> element of its own, allowed on that page only.
API_DOCS_CSP: dict[str, Any] = {**settings.SECURE_CSP, "style-src": [CSP.SELF, CSP.UNSAFE_INLINE]}

handler500 = "workbench.views.server_error"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz/", views.healthz, name="healthz"),
    path("readyz/", views.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("ci/workbench-ci.py", views.ci_client_download, name="ci_client_download"),
    path("probe/", include("poc.probes.public_urls")),
    path("accounts/", include("evaluations.auth_urls")),
    path("accounts/oidc/", include("evaluations.oidc_urls")),
    path("accounts/preferences/", views.preferences, name="preferences"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("search/", include("poc.search_urls")),
    path("projects/", include("evaluations.urls")),
    path("projects/", include("poc.urls")),
    path("projects/", include("reports.procurement.urls")),
    path("", include("reports.urls")),
    path("catalog/", include("evaluations.catalog_urls")),
    path("status/", views.system_status, name="system_status"),
    path("status/checks/", views.worker_check_create, name="worker_check_create"),
    path("status/checks/<int:check_id>/", views.worker_check_detail, name="worker_check_detail"),
    # Each app owns its API; they share one prefix.
    path("api/v1/", include("evaluations.api.urls")),
    path("api/v1/", include("poc.api.urls")),
    path("api/v1/", include("reports.procurement.api_urls")),
    path("api/v1/", include("reports.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path(
        "api/docs/",
        csp_override(API_DOCS_CSP)(SpectacularSwaggerSplitView.as_view(url_name="api_schema")),
        name="api_docs",
    ),
    path("admin/", admin.site.urls),
]
