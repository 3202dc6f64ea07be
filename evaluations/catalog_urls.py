"""The solution catalog, mounted at /catalog/ by the root URLconf."""

from django.urls import path

from evaluations.views import projects

urlpatterns = [path("", projects.catalog, name="catalog")]
