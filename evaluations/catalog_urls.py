"""The solution catalog, mounted at /catalog/ by the root URLconf."""

from django.urls import path

from evaluations.views import projects

urlpatterns = [
    path("", projects.catalog, name="catalog"),
    path("add/", projects.catalog_add, name="catalog_add"),
    path("<slug:key>/edit/", projects.catalog_edit, name="catalog_edit"),
]
