"""The login page, mounted at /accounts/login/ by the root URLconf."""

from django.urls import path

from evaluations.views.auth import WorkbenchLoginView

urlpatterns = [path("", WorkbenchLoginView.as_view(), name="login")]
