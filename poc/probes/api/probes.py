"""GPU probe runs over the API: the push agent posts its bundle, anyone who may read the
project lists runs and reads a run's facts and health."""

import json
from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import api_project, request_person, request_token
from evaluations.api.inputs import (
    FIELD_MESSAGES,
    QUERY,
    IntegerValueField,
    TextField,
    input_refused,
)
from evaluations.api.parsers import MAX_DEPTH_MESSAGE
from evaluations.models import Project
from evaluations.selectors import candidate_for_project
from poc.probes import selectors
from poc.probes.api.outputs import ProbeRunDetailOutput, ProbeRunOutput
from poc.probes.api.posting import (
    probe_post,
    probe_post_schema,
    project_candidate,
    recorded_answer,
)
from poc.probes.services import probes as probe_services

LIST: dict[str, Any] = {**FIELD_MESSAGES, "not_a_list": "must be a list"}
OBJECT: dict[str, Any] = {**FIELD_MESSAGES, "not_a_dict": "must be an object"}


class CandidateQuery(serializers.Serializer):
    candidate = TextField(required=False, help_text="A candidate's slug.")


class ProbeCommandInput(serializers.Serializer):
    """One command the agent ran on the node, with what it printed."""

    default_error_messages = {"invalid": "must be an object"}

    name = TextField(help_text="The command (non-empty).")
    stdout = TextField(required=False, allow_null=True, allow_blank=True)
    stderr = TextField(required=False, allow_null=True, allow_blank=True)
    exit_code = IntegerValueField(required=False, allow_null=True)
    duration_s = serializers.FloatField(required=False, allow_null=True, min_value=0)


class ProbeBundleInput(serializers.Serializer):
    """The push agent's bundle for one node (docs/probes.md, "The agent bundle"). Unknown keys
    are ignored; the parsers read the outputs and name what they cannot read."""

    default_error_messages = {"invalid": "the body must be a JSON object (the agent's bundle)"}

    format = TextField(help_text="workbench-probe-bundle/1")
    candidate = TextField(
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="The candidate's slug, when the URL does not name it (both must agree).",
    )
    host = TextField(required=False, allow_null=True, allow_blank=True)
    collected_at = TextField(required=False, allow_null=True, allow_blank=True)
    collection_id = TextField(
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="One random id per collection, so that retries repeat the Idempotency-Key.",
    )
    expected_gpus = IntegerValueField(
        required=False,
        allow_null=True,
        min_value=0,
        help_text="The GPUs the operator says the node has.",
    )
    agent = serializers.DictField(required=False, allow_null=True, error_messages=OBJECT)
    nvml = serializers.DictField(required=False, allow_null=True, error_messages=OBJECT)
    outputs = serializers.ListField(child=ProbeCommandInput(), error_messages=LIST)
    benchmarks = serializers.ListField(
        child=serializers.DictField(error_messages=OBJECT),
        required=False,
        allow_null=True,
        error_messages=LIST,
        help_text="Figures the agent measured, one object per GPU.",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        """The candidate: `?candidate=` or the bundle's own, which must agree."""
        query, named = self.context.get("candidate") or "", data.get("candidate") or ""
        if query and named and query != named:
            raise serializers.ValidationError(
                f"the bundle names candidate {named!r}, the URL {query!r}"
            )
        if not (query or named):
            raise serializers.ValidationError("name the candidate: ?candidate=SLUG")
        return {**data, "candidate": query or named}


class ProbeListCreateApi(APIView):
    """GET: a project's probe runs, newest first. POST: a push agent's bundle (JSON body) for
    one candidate (`?candidate=` or the bundle's `candidate`), parsed, judged and recorded."""

    parser_classes: list[Any] = []  # the bundle is read raw, within API_MAX_BODY_MB

    @extend_schema(parameters=[CandidateQuery], responses=ProbeRunOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug)
        query = CandidateQuery(data=request.query_params)
        if not query.is_valid():
            return input_refused(query, where=QUERY)
        named = query.validated_data.get("candidate")
        candidate = candidate_for_project(project, named) if named else None
        runs = selectors.probe_runs_for_project(project, candidate=candidate, limit=200)
        return Response(ProbeRunOutput(runs, many=True, context={"request": request}).data)

    @probe_post_schema({"application/json": ProbeBundleInput}, CandidateQuery)
    def post(self, request: Request, slug: str) -> Response:
        return probe_post(request, slug, lambda project, body: _store(request, project, body))


def _store(request: Request, project: Project, body: bytes) -> Response:
    bundle = _decoded(body)
    if isinstance(bundle, Response):
        return bundle
    query = CandidateQuery(data=request.query_params)
    if not query.is_valid():
        return input_refused(query, where=QUERY)
    context = {"candidate": query.validated_data.get("candidate", "")}
    payload = ProbeBundleInput(data=bundle, context=context)
    if not payload.is_valid():
        return input_refused(payload)
    candidate = project_candidate(project, payload.validated_data["candidate"])
    if isinstance(candidate, Response):
        return candidate
    return recorded_answer(
        request,
        lambda: probe_services.probe_ingest_bundle(
            project=project,
            candidate=candidate,
            bundle=bundle,  # as sent: the parsers read every key, the serializer only some
            actor=request_person(request),
            token=request_token(request),
        ),
    )


def _decoded(body: bytes) -> Any:
    """The posted JSON, or the 400 that says why the body is none."""
    try:
        return json.loads(body)
    except RecursionError:
        return Response({"detail": MAX_DEPTH_MESSAGE}, 400)
    except ValueError as exc:
        return Response({"detail": f"the body is not a JSON bundle: {exc}"[:300]}, 400)


class ProbeDetailApi(APIView):
    """One probe run with each node's facts and health, and its raw outputs' hashes."""

    @extend_schema(responses=ProbeRunDetailOutput)
    def get(self, request: Request, run_id: int) -> Response:
        run = selectors.probe_run_with_project(run_id)
        if run is None:
            raise Http404
        api_project(request, run.project.slug)  # 404 for callers outside its project
        return Response(ProbeRunDetailOutput(run, context={"request": request}).data)
