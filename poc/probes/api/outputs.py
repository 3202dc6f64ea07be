"""What the probe endpoints answer: one output serializer per answer, used for the response
and for the schema."""

from typing import Any

from django.urls import reverse
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from evaluations.api.outputs import CellRefOutput, ChangeCountsOutput
from poc.probes.models import ProbeRun
from poc.probes.services.probes import ProbeRecorded


class ProbeRunOutput(serializers.ModelSerializer):
    candidate = serializers.CharField(source="candidate.slug")
    url = serializers.SerializerMethodField()
    results_run = serializers.IntegerField(source="run_id", allow_null=True)

    class Meta:
        model = ProbeRun
        fields = [
            "id",
            "url",
            "candidate",
            "source",
            "status",
            "verdict",
            "node_count",
            "gpu_count",
            "parser_version",
            "facts_format",
            "error",
            "results_run",
            "created_at",
            "finished_at",
        ]

    def get_url(self, run: ProbeRun) -> str:
        request = self.context.get("request")
        path = reverse("poc:probe_run", kwargs={"slug": run.project.slug, "run_id": run.pk})
        return request.build_absolute_uri(path) if request is not None else path


class ProbeNodeOutput(serializers.Serializer):
    host = serializers.CharField()
    verdict = serializers.CharField()
    gpu_count = serializers.IntegerField()
    facts = serializers.JSONField()
    health = serializers.JSONField()


class ProbeRunDetailOutput(ProbeRunOutput):
    nodes = ProbeNodeOutput(many=True)
    outputs = serializers.SerializerMethodField()
    cluster = serializers.JSONField(
        source="cluster_facts",
        read_only=True,
        help_text=(
            "What a Kubernetes or Slurm cluster run read about the cluster itself (versions, "
            "products found, queues, partitions, quotas, controlled failures, what could not "
            "be checked); {} for other runs. Never holds credentials."
        ),
    )

    class Meta(ProbeRunOutput.Meta):
        fields = [*ProbeRunOutput.Meta.fields, "nodes", "outputs", "cluster"]

    def get_outputs(self, run: ProbeRun) -> list[dict[str, Any]]:
        return [
            {
                "name": o.name,
                "exit_code": o.exit_code,
                "error": o.error,
                "sha256": o.sha256,
                "size": o.size,
            }
            for o in run.outputs.all()
        ]


class ProbeResultsOutput(serializers.Serializer):
    run = serializers.IntegerField(help_text="The results run the probe's verdicts went into.")
    stored = serializers.IntegerField()
    changes = ChangeCountsOutput()


class ProbeRecordedOutput(serializers.Serializer):
    run = ProbeRunOutput()
    results = ProbeResultsOutput(allow_null=True, help_text="null when no action is bound.")
    regressed = CellRefOutput(many=True)
    recovered = CellRefOutput(many=True)


def recorded_response(request: Request, recorded: ProbeRecorded) -> Response:
    """201 with the stored run and the results it recorded."""
    record = recorded.results
    return Response(
        ProbeRecordedOutput(
            {
                "run": recorded.run,
                "results": None
                if record is None
                else {
                    "run": record.results_run,
                    "stored": record.stored,
                    "changes": record.changes,
                },
                "regressed": record.regressed if record else [],
                "recovered": record.recovered if record else [],
            },
            context={"request": request},
        ).data,
        status=201,
    )
