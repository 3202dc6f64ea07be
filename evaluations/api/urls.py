from django.urls import path

from evaluations.api.views import ActionListApi

urlpatterns = [
    path("projects/<slug:slug>/actions/", ActionListApi.as_view(), name="api_action_list"),
]
