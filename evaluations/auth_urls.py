"""The login and logout pages, mounted at /accounts/ by the root URLconf."""

from django.urls import path

from evaluations.views.auth import WorkbenchLoginView, WorkbenchLogoutView

urlpatterns = [
    path("login/", WorkbenchLoginView.as_view(), name="login"),
    path("logout/", WorkbenchLogoutView.as_view(), name="logout"),
]
