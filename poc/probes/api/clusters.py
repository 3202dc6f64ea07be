"""Registered clusters over the API: list them (never their secrets), and start a probe run
(a token with the clusters:run scope, or a member who may write)."""

from typing import Any

from django.core.exceptions import ValidationError
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import api_project, request_person
from evaluations.models import TokenScope
from poc.probes import selectors
from poc.probes.api.outputs import ProbeRunOutput
from poc.probes.models import Cluster
from poc.probes.services import clusters as cluster_services


class ClusterOutput(serializers.ModelSerializer):
    candidate = serializers.CharField(source="candidate.slug")
    nodes = serializers.SerializerMethodField()
    secrets_set = serializers.SerializerMethodField()
    pinned_host_keys = serializers.SerializerMethodField()
    latest_run = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = [
            "id",
            "name",
            "candidate",
            "kind",
            "nodes",
            "ssh_user",
            "api_url",
            "slurm_user",
            "expected_gpus_per_node",
            "controlled_failures",
            "failure_namespace",
            "schedule_minutes",
            "secrets_set",
            "pinned_host_keys",
            "latest_run",
        ]

    def get_nodes(self, cluster: Cluster) -> list[str]:
        return [f"{h}:{p}" for h, p in cluster.node_addresses()]

    def get_secrets_set(self, cluster: Cluster) -> list[str]:
        return sorted(cluster.secret_summary)  # names only: values never leave the workbench

    def get_pinned_host_keys(self, cluster: Cluster) -> dict[str, str]:
        return {node: key["fingerprint"] for node, key in cluster.host_keys.items()}

    def get_latest_run(self, cluster: Cluster) -> dict[str, Any] | None:
        run = getattr(cluster, "latest_run", None)
        if run is None:
            return None
        return {"id": run.pk, "status": run.status, "verdict": run.verdict}


class ClusterListApi(APIView):
    """A project's registered clusters (secrets are never returned, only which are set)."""

    @extend_schema(responses=ClusterOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug)
        return Response(ClusterOutput(selectors.clusters_for_project(project), many=True).data)


class ClusterRunInput(serializers.Serializer):
    controlled_failures = serializers.BooleanField(required=False, allow_null=True, default=None)


class ClusterRunApi(APIView):
    """POST: queue a probe run of the cluster (answered 202; poll GET /probes/{id}/)."""

    @extend_schema(request=ClusterRunInput, responses={202: ProbeRunOutput})
    def post(self, request: Request, cluster_id: int) -> Response:
        cluster = selectors.cluster_with_project(cluster_id)
        if cluster is None:
            raise Http404
        api_project(request, cluster.project.slug, scope=TokenScope.CLUSTERS_RUN)
        data = ClusterRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            run = cluster_services.probe_run_start(
                cluster=cluster,
                actor=request_person(request),
                with_failures=data.validated_data["controlled_failures"],
            )
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=400)
        return Response(ProbeRunOutput(run, context={"request": request}).data, status=202)
