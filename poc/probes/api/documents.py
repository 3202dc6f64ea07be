"""Cluster documents over the API: what the admins of a cluster the workbench cannot reach save
with kubectl or Slurm's commands, posted by a pipeline with a probes:write token and stored as
a probe run of a candidate (and optionally of one of its clusters)."""

import json
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import request_person, request_token
from evaluations.api.inputs import (
    FIELD_MESSAGES,
    QUERY,
    IdField,
    StringField,
    TextField,
    input_refused,
)
from evaluations.api.parsers import MAX_DEPTH_MESSAGE
from evaluations.models import Project
from poc.probes import selectors
from poc.probes.api.posting import (
    probe_post,
    probe_post_schema,
    project_candidate,
    recorded_answer,
)
from poc.probes.models import Cluster
from poc.probes.services import documents as document_services


class DocumentsQuery(serializers.Serializer):
    candidate = TextField(help_text="The candidate the documents are of (its slug).")
    cluster = IdField(required=False, help_text="One of the candidate's clusters.")
    name = TextField(
        required=False, allow_blank=True, help_text="The document's name (a single one)."
    )


@extend_schema_serializer(component_name="ClusterDocument")
class ClusterDocumentInput(serializers.Serializer):
    default_error_messages = {"invalid": "must be an object with a text"}

    name = TextField(required=False, allow_null=True, allow_blank=True, help_text="A file name.")
    text = StringField(allow_blank=True)


class ClusterDocumentsInput(serializers.Serializer):
    documents = serializers.ListField(
        child=ClusterDocumentInput(),
        error_messages={**FIELD_MESSAGES, "not_a_list": "must be a list"},
        help_text="Several documents at once, each with its name (a file name).",
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

    @probe_post_schema(
        {
            "application/json": ClusterDocumentsInput,
            "application/yaml": OpenApiTypes.STR,
            "text/plain": OpenApiTypes.STR,
        },
        DocumentsQuery,
    )
    def post(self, request: Request, slug: str) -> Response:
        return probe_post(request, slug, lambda project, body: _store(request, project, body))


def _store(request: Request, project: Project, body: bytes) -> Response:
    data = _json(body)
    if isinstance(data, Response):
        return data
    query = DocumentsQuery(data=request.query_params)
    if not query.is_valid():
        return input_refused(query, where=QUERY)
    documents = _documents(data, body, name=query.validated_data.get("name") or "body")
    if isinstance(documents, Response):
        return documents
    candidate = project_candidate(project, query.validated_data["candidate"])
    if isinstance(candidate, Response):
        return candidate
    cluster = _cluster(project, query.validated_data.get("cluster"))
    if isinstance(cluster, Response):
        return cluster
    return recorded_answer(
        request,
        lambda: document_services.cluster_documents_record(
            project=project,
            candidate=candidate,
            cluster=cluster,
            documents=documents,
            actor=request_person(request),
            token=request_token(request),
        ),
    )


def _cluster(project: Project, cluster_id: int | None) -> Cluster | Response | None:
    """The project's cluster the query names (None when it names none), or the 404."""
    if cluster_id is None:
        return None
    cluster = selectors.cluster_with_project(cluster_id)
    if cluster is None or cluster.project_id != project.pk:
        return Response({"detail": f"no cluster {cluster_id} in this project"}, 404)
    return cluster


def _json(body: bytes) -> Any:
    """The body as JSON when it reads as JSON, else None (a document in another format, or
    several JSON objects one after another); nested too deeply: the 400 every route answers."""
    if body.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        return json.loads(body)
    except RecursionError:
        return Response({"detail": MAX_DEPTH_MESSAGE}, status=400)
    except ValueError:
        return None


def _documents(data: Any, body: bytes, *, name: str) -> list[tuple[str, bytes | str]] | Response:
    """The body as documents: an envelope {"documents": [...]} of several, or one named
    `name`. Any other JSON is one document."""
    listed = data.get("documents") if isinstance(data, dict) else None
    if isinstance(listed, list) and len(data) == 1:
        envelope = ClusterDocumentsInput(data=data)
        if not envelope.is_valid():
            return input_refused(envelope)
        return [
            ((item.get("name") or f"document {index}")[:200], item["text"])
            for index, item in enumerate(envelope.validated_data["documents"], start=1)
        ]
    return [(name[:200], body)]
