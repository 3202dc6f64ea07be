from django.urls import path

from poc.views import search

urlpatterns = [
    path("", search.search, name="search"),
]
