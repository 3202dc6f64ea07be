"""Cluster documents over the API: what the admins of a cluster the workbench cannot reach save
with kubectl or Slurm's commands, posted by a pipeline with a probes:write token and stored as
a probe run of a candidate (and optionally of one of its clusters)."""

import json
from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import api_project, request_person, request_token
from evaluations.api.idempotency import idempotent
from evaluations.api.parsers import MAX_DEPTH_MESSAGE
from evaluations.models import Candidate, Project, TokenScope
from poc.probes.api.probes import ProbeRecordedOutput, read_body, recorded_response
from poc.probes.models import Cluster
from poc.probes.services import documents as document_services
from poc.probes.services.probes import ProbeInputError
from workbench.text import text_problem

ENVELOPE = inline_serializer(
    "ClusterDocumentsInput",
    {
        "documents": serializers.ListField(
            child=inline_serializer(
                "ClusterDocument",
                {"name": serializers.CharField(), "text": serializers.CharField()},
            ),
            help_text="Several documents at once, each with its name (a file name).",
        )
    },
)


class ClusterDocumentsApi(APIView):
    """POST: documents of a cluster the workbench cannot reach, for one candidate
    (`?candidate=`) and optionally one of its clusters (`?cluster=` id): the body is one
    document as text (Kubernetes objects as YAML or JSON, `kubectl describe pod`, `scontrol show
    nodes`, `sinfo`, slurmrestd's or `sinfo --json`'s JSON), named by `?name=`; or a JSON object
    {"documents": [{"name", "text"}, ...]} for several. Read by the live connectors' functions,
    judged by the checks a live cluster run is judged by, recorded; 400 naming the document
    that cannot be read, and nothing stored."""

    parser_classes: list[Any] = []  # the documents are read raw, within API_MAX_BODY_MB

    @extend_schema(
        request={
            "application/json": ENVELOPE,
            "application/yaml": OpenApiTypes.STR,
            "text/plain": OpenApiTypes.STR,
        },
        parameters=[
            OpenApiParameter("candidate", str, required=True),
            OpenApiParameter("cluster", int, description="One of the candidate's clusters."),
            OpenApiParameter("name", str, description="The document's name (a single one)."),
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
        documents = _documents(request, body)
        if isinstance(documents, Response):
            return documents
        target = _target(request, project)
        if isinstance(target, Response):
            return target
        try:
            recorded = document_services.cluster_documents_record(
                project=project,
                candidate=target[0],
                cluster=target[1],
                documents=documents,
                actor=request_person(request),
                token=request_token(request),
            )
        except ProbeInputError as exc:
            return Response({"detail": str(exc)}, status=400)
        return recorded_response(request, recorded)


def _target(request: Request, project: Project) -> tuple[Candidate, Cluster | None] | Response:
    """The candidate and cluster named in the query, or the 400 / 404 saying what is wrong."""
    slug = request.query_params.get("candidate", "")
    if not slug:
        return Response({"detail": "name the candidate: ?candidate=SLUG"}, status=400)
    if problem := text_problem(slug):
        return Response({"detail": f"candidate {problem}"}, status=400)
    candidate = project.candidates.filter(slug=slug).first()
    if candidate is None:
        return Response({"detail": f"no candidate {slug[:80]!r} in this project"}, 404)
    cluster_id = request.query_params.get("cluster", "")
    if not cluster_id:
        return candidate, None
    if not (cluster_id.isascii() and cluster_id.isdigit() and len(cluster_id) <= 9):
        return Response({"detail": "cluster must be a cluster's id"}, status=400)
    cluster = Cluster.objects.filter(project=project, pk=int(cluster_id)).first()
    if cluster is None:
        return Response({"detail": f"no cluster {cluster_id} in this project"}, 404)
    return candidate, cluster


def _documents(request: Request, body: bytes) -> list[tuple[str, bytes | str]] | Response:
    """The body as documents: an envelope of several, or one named by `?name=`; JSON nested
    too deeply is refused as on every route that reads JSON."""
    data = None
    if body.lstrip()[:1] in (b"{", b"["):
        try:
            data = json.loads(body)
        except RecursionError:
            return Response({"detail": MAX_DEPTH_MESSAGE}, status=400)
        except ValueError:
            data = None  # several objects one after another, or not JSON: read as a document
    if isinstance(data, dict) and "documents" in data:
        listed = data.get("documents")
        if isinstance(listed, list) and set(data) <= {"documents"}:
            documents: list[tuple[str, bytes | str]] = []
            for index, item in enumerate(listed, start=1):
                if not (isinstance(item, dict) and isinstance(item.get("text"), str)):
                    return Response(
                        {"detail": f"documents[{index - 1}] must be an object with a text"}, 400
                    )
                name = str(item.get("name") or f"document {index}")[:200]
                if problem := text_problem(name):
                    return Response({"detail": f"documents[{index - 1}].name {problem}"}, 400)
                documents.append((name, item["text"]))
            return documents
    name = request.query_params.get("name", "") or "body"
    if problem := text_problem(name):
        return Response({"detail": f"name {problem}"}, status=400)
    return [(name[:200], body)]
