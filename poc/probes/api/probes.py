"""GPU probe runs over the API: the push agent posts its bundle, anyone who may read the
project lists runs and reads a run's facts and health."""

import json
from typing import Any

from django.conf import settings
from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import api_project, request_person, request_token
from evaluations.api.idempotency import idempotent
from evaluations.api.outputs import CellRefOutput, ChangeCountsOutput
from evaluations.api.parsers import MAX_DEPTH_MESSAGE
from evaluations.models import Candidate, Project, TokenScope
from poc.probes import selectors
from poc.probes.models import (
    ProbeRun,
)
from poc.probes.services import probes as probe_services
from workbench.text import text_problem


def read_body(request: Request, limit: int) -> bytes | Response:
    """The raw body, read up to `limit` bytes whatever Django's form-data limit says: a
    bundle of a large node is bigger than a form. Past the limit: 413, nothing read further."""
    raw_length = request.META.get("CONTENT_LENGTH") or "0"
    try:
        length = int(raw_length)
    except ValueError:
        return Response({"detail": f"Content-Length {raw_length[:40]!r} is not a number"}, 400)
    if length > limit:
        return Response({"detail": f"the body is over the {limit}-byte limit"}, status=413)
    django_request = request._request
    if hasattr(django_request, "_body"):
        data = django_request._body
    else:
        data = django_request.read(limit + 1)
    if len(data) > limit:
        return Response({"detail": f"the body is over the {limit}-byte limit"}, status=413)
    return data


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


class ProbeListCreateApi(APIView):
    """GET: a project's probe runs, newest first. POST: a push agent's bundle (JSON body) for
    one candidate (`?candidate=` or the bundle's `candidate`), parsed, judged and recorded."""

    parser_classes: list[Any] = []  # the bundle is read raw, within API_MAX_BODY_MB

    @extend_schema(
        parameters=[OpenApiParameter("candidate", str)], responses=ProbeRunOutput(many=True)
    )
    def get(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug)
        candidate = None
        if slug_filter := request.query_params.get("candidate"):
            if problem := text_problem(slug_filter):
                return Response({"detail": f"query parameter candidate {problem}"}, status=400)
            candidate = project.candidates.filter(slug=slug_filter).first()
            if candidate is None:
                raise Http404
        runs = selectors.probe_runs_for_project(project, candidate=candidate, limit=200)
        return Response(ProbeRunOutput(runs, many=True, context={"request": request}).data)

    @extend_schema(
        request={"application/json": {"type": "object"}},
        parameters=[
            OpenApiParameter("candidate", str),
            OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER),
        ],
        responses={201: ProbeRecordedOutput},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug, scope=TokenScope.PROBES_WRITE)
        body = read_body(request, settings.API_MAX_BODY_BYTES)
        if isinstance(body, Response):
            return body
        return idempotent(request, body, lambda: self._store(request, project, body))

    def _store(self, request: Request, project: Project, body: bytes) -> Response:
        bundle = _bundle(body)
        if isinstance(bundle, Response):
            return bundle
        candidate = _bundle_candidate(request, project, bundle)
        if isinstance(candidate, Response):
            return candidate
        token = request_token(request)
        try:
            recorded = probe_services.probe_ingest_bundle(
                project=project,
                candidate=candidate,
                bundle=bundle,
                actor=request_person(request),
                token=token,
            )
        except probe_services.ProbeInputError as exc:
            return Response({"detail": str(exc)}, status=400)
        return recorded_response(request, recorded)


def recorded_response(request: Request, recorded: probe_services.ProbeRecorded) -> Response:
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


def _bundle(body: bytes) -> dict[str, Any] | Response:
    """The posted bundle as an object, or the 400 that says why it is not one."""
    try:
        bundle = json.loads(body)
    except RecursionError:
        return Response({"detail": MAX_DEPTH_MESSAGE}, 400)
    except ValueError as exc:
        return Response({"detail": f"the body is not a JSON bundle: {exc}"[:300]}, 400)
    if not isinstance(bundle, dict):
        return Response({"detail": "the body must be a JSON object (the agent's bundle)"}, 400)
    return bundle


class ProbeDetailApi(APIView):
    """One probe run with each node's facts and health, and its raw outputs' hashes."""

    @extend_schema(responses=ProbeRunDetailOutput)
    def get(self, request: Request, run_id: int) -> Response:
        run = selectors.probe_run_with_project(run_id)
        if run is None:
            raise Http404
        api_project(request, run.project.slug)  # 404 for callers outside its project
        return Response(ProbeRunDetailOutput(run, context={"request": request}).data)


def _bundle_candidate(
    request: Request, project: Project, bundle: dict[str, Any]
) -> Candidate | Response:
    """The candidate a bundle is for: `?candidate=` or the bundle's own `candidate` (the two
    must agree); a 400 or 404 answer saying what is wrong otherwise."""
    slug = request.query_params.get("candidate", "")
    named = bundle.get("candidate")
    if named is not None and not isinstance(named, str):
        return Response({"detail": "candidate must be a string"}, status=400)
    if slug and named and slug != named:
        return Response(
            {"detail": f"the bundle names candidate {named!r}, the URL {slug!r}"}, status=400
        )
    slug = slug or named or ""
    if not slug:
        return Response({"detail": "name the candidate: ?candidate=SLUG"}, status=400)
    if problem := text_problem(slug):
        return Response({"detail": f"candidate {problem}"}, status=400)
    candidate = project.candidates.filter(slug=slug).first()
    if candidate is None:
        return Response({"detail": f"no candidate {slug[:80]!r} in this project"}, 404)
    return candidate
