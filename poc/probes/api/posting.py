"""What the endpoints that store a probe run share: the raw body read within
API_MAX_BODY_MB, one store per Idempotency-Key, the candidate a post names, and the answer."""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from evaluations.api.access import api_project
from evaluations.api.idempotency import idempotent
from evaluations.models import Candidate, Project, TokenScope
from evaluations.selectors import candidate_for_project
from poc.probes.api.outputs import ProbeRecordedOutput, recorded_response
from poc.probes.services.probes import ProbeInputError, ProbeRecorded


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


def probe_post_schema(
    body: dict[str, Any], query: type[serializers.Serializer]
) -> Callable[[Any], Any]:
    """The schema of such a post: its body by media type, its query, the Idempotency-Key."""
    return extend_schema(
        request=body,
        parameters=[query, OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER)],
        responses={201: ProbeRecordedOutput},
    )


def probe_post(
    request: Request, slug: str, store: Callable[[Project, bytes], Response]
) -> Response:
    """A post that stores a probe run (the probes:write scope): its raw body handed to `store`
    once per Idempotency-Key; a retry replays the first answer."""
    project = api_project(request, slug, scope=TokenScope.PROBES_WRITE)
    body = read_body(request, settings.API_MAX_BODY_BYTES)
    if isinstance(body, Response):
        return body
    return idempotent(request, body, lambda: store(project, body))


def project_candidate(project: Project, slug: str) -> Candidate | Response:
    """The project's candidate `slug`, or the 404 that names it."""
    try:
        return candidate_for_project(project, slug)
    except Http404:
        return Response({"detail": f"no candidate {slug[:80]!r} in this project"}, status=404)


def recorded_answer(request: Request, record: Callable[[], ProbeRecorded]) -> Response:
    """201 with what `record` stored, or the 400 saying why the probe input cannot be used
    (nothing stored)."""
    try:
        recorded = record()
    except ProbeInputError as exc:
        return Response({"detail": str(exc)}, status=400)
    return recorded_response(request, recorded)
