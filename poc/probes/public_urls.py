from django.urls import path

from poc.probes.views import probes

urlpatterns = [
    path("workbench-probe.py", probes.agent_download, name="probe_agent_download"),
]
