"""The REST API (under /api/v1/): thin views over selectors and services.

Members call it with their browser session; CI pipelines with a project-scoped bearer token.
A caller that is neither gets 404 for every object of a project, exactly as a non-member.
"""

from typing import Any

from django.conf import settings
from django.http import Http404
from django.http.multipartparser import MultiPartParserError
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import api_project, request_person, request_token
from evaluations.api.authentication import BearerTokenAuthentication, RawBodySessionAuthentication
from evaluations.api.idempotency import idempotent
from evaluations.api.inputs import QUERY, FlagField, TextField, UploadField, input_refused
from evaluations.api.outputs import CellRefOutput, ChangeCountsOutput
from evaluations.api.parsers import DepthSafeJSONParser
from evaluations.models import Project, TokenScope
from poc import selectors, services
from poc.models import (
    Outcome,
    Run,
)
from workbench.hashing import sha256_chunks


def _too_big(request: Request) -> Response | None:
    raw = request.META.get("CONTENT_LENGTH") or "0"
    try:
        length = int(raw)
    except ValueError:
        return Response({"detail": f"Content-Length {str(raw)[:40]!r} is not a number"}, 400)
    if length > settings.API_MAX_BODY_BYTES:
        return Response(
            {"detail": f"request body over {settings.API_MAX_BODY_BYTES} bytes"}, status=413
        )
    return None


# --- reads -------------------------------------------------------------------------------


class MatrixCellOutput(serializers.Serializer):
    candidate = serializers.SlugField()
    action = serializers.CharField()
    outcome = serializers.ChoiceField(choices=Outcome.values)
    result_id = serializers.IntegerField(allow_null=True)
    after_freeze = serializers.BooleanField(
        help_text="The latest result came after the revision the project is frozen for."
    )


class MatrixOutput(serializers.Serializer):
    """The matrix's answer. Built by the selector as plain data, not through this serializer:
    it holds up to 100,000 cells; the response conformance test holds the two together."""

    candidates = serializers.ListField(child=serializers.SlugField())
    actions = serializers.ListField(child=serializers.CharField())
    cells = MatrixCellOutput(many=True)
    totals = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text="Per candidate slug: the number of cells of each outcome.",
    )
    frozen_revision = serializers.IntegerField(
        allow_null=True, help_text="The revision the project is frozen for, if any."
    )


class MatrixApi(APIView):
    """One cell per candidate × action: the latest result, or not_covered."""

    @extend_schema(responses=MatrixOutput)
    def get(self, request: Request, slug: str) -> Response:
        return Response(selectors.matrix_api_data(api_project(request, slug)))


class RunOutput(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    name = serializers.CharField()
    url = serializers.CharField()
    commit = serializers.CharField()
    candidate = serializers.CharField(source="candidate.slug", allow_null=True, default=None)
    project = serializers.CharField(source="project.slug")
    created_at = serializers.DateTimeField()
    imports = serializers.SerializerMethodField()

    def get_imports(self, run: Run) -> list[dict[str, Any]]:
        return [
            {
                "posted_at": i.posted_at,
                "kind": i.kind,
                "results": i.result_count,
                "new": i.new,
                "unchanged": i.unchanged,
                "changed": i.changed,
                "regressed": i.regressed,
                "recovered": i.recovered,
                "unmapped": len(i.unmapped),
            }
            for i in run.imports.all()
        ]


class RunDetailApi(APIView):
    @extend_schema(responses=RunOutput)
    def get(self, request: Request, run_id: int) -> Response:
        run = selectors.run_with_imports(run_id)
        if run is None:
            raise Http404
        api_project(request, run.project.slug)  # 404 for callers outside its project
        return Response(RunOutput(run).data)


# --- writes ------------------------------------------------------------------------------


class RunInput(serializers.Serializer):
    external_id = serializers.CharField(max_length=200)
    name = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    url = serializers.URLField(max_length=2000, required=False, allow_blank=True, default="")
    commit = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    # No default: "" would contradict the slug pattern in the schema (RunData's default is "").
    candidate = serializers.SlugField(required=False, allow_blank=True)


class ResultsInput(serializers.Serializer):
    run = RunInput()
    results = serializers.ListField(child=serializers.JSONField(), allow_empty=False)


class RunRefOutput(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()


class UnmappedTestcaseOutput(serializers.Serializer):
    name = serializers.CharField(allow_blank=True)
    classname = serializers.CharField(allow_blank=True)
    action = serializers.CharField(
        required=False, help_text="The action key the testcase named, unknown in this project."
    )


class ImportResultOutput(serializers.Serializer):
    """What one post of results (JSON or JUnit) stored and changed."""

    run = RunRefOutput()
    stored = serializers.IntegerField()
    changes = ChangeCountsOutput()
    regressed = CellRefOutput(many=True)
    recovered = CellRefOutput(many=True)
    unmapped = UnmappedTestcaseOutput(many=True)


def _import_response(
    record: Any, run: Run, notable: dict[str, list[dict[str, str]]], unmapped: list[Any]
) -> dict[str, Any]:
    return ImportResultOutput(
        {
            "run": {"id": run.pk, "external_id": run.external_id},
            "stored": record.result_count,
            "changes": {
                "new": record.new,
                "unchanged": record.unchanged,
                "changed": record.changed,
                "regressed": record.regressed,
                "recovered": record.recovered,
            },
            "regressed": notable["regressed"],
            "recovered": notable["recovered"],
            "unmapped": unmapped,
        }
    ).data


class ResultBulkCreateApi(APIView):
    """Post up to 5,000 results at once, all or nothing."""

    parser_classes = [DepthSafeJSONParser]

    @extend_schema(
        request=ResultsInput,
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER)],
        responses={201: ImportResultOutput},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug, scope=TokenScope.RESULTS_WRITE)
        if (refusal := _too_big(request)) is not None:
            return refusal
        fingerprint = request.body
        return idempotent(request, fingerprint, lambda: self._store(request, project))

    def _store(self, request: Request, project: Project) -> Response:
        payload = ResultsInput(data=request.data)
        if not payload.is_valid():
            return Response({"detail": "bad request", "errors": payload.errors}, status=400)
        run = services.RunData(**payload.validated_data["run"])
        rows = payload.validated_data["results"]
        try:
            valid = services.validate_rows(project, rows, default_candidate=run.candidate)
        except services.IngestError as exc:
            return Response(
                {
                    "detail": exc.message
                    or f"{len(exc.errors)} of {len(rows)} results are bad; nothing was stored",
                    "errors": exc.errors,
                },
                status=400,
            )
        record, notable = services.results_ingest(
            project=project,
            run=run,
            rows=valid,
            token=request_token(request),
            user=request_person(request),
        )
        return Response(_import_response(record, record.run, notable, []), status=201)


def _junit_report(request: Request) -> bytes | Response:
    """The report: the raw body, or the multipart field `file` (what generated API clients
    and `curl -F file=@report.xml` send)."""
    if not request.content_type.startswith("multipart/form-data"):
        return request.body
    try:
        upload = request._request.FILES.get("file")  # Django's own parser, size-limited
    except (ValueError, MultiPartParserError) as exc:
        return Response({"detail": f"the multipart body cannot be read: {exc}"}, status=400)
    if upload is None:
        return Response({"detail": "send the report as multipart field 'file'"}, status=400)
    return upload.read()


class JUnitQuery(serializers.Serializer):
    candidate = TextField(help_text="The candidate the report is for (its slug).")
    run = TextField(max_length=200, help_text="The CI run's id (results append to it).")
    supersede_evidence = FlagField(
        required=False,
        help_text="The report's results replace the evidence people recorded on their cells "
        "(kept and listed as superseded); by default it is carried forward.",
    )


class JUnitImportApi(APIView):
    """Post a JUnit XML report for one candidate and run: the body, or multipart field `file`."""

    parser_classes: list[Any] = []  # the report is read raw from the body, whatever its type
    authentication_classes = [BearerTokenAuthentication, RawBodySessionAuthentication]

    @extend_schema(
        request={
            "application/xml": {"type": "string", "format": "binary"},
            "multipart/form-data": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}},
                "required": ["file"],
            },
        },
        parameters=[
            JUnitQuery,
            OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER),
        ],
        responses={201: ImportResultOutput},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug, scope=TokenScope.RESULTS_WRITE)
        if (refusal := _too_big(request)) is not None:
            return refusal
        body = _junit_report(request)
        if isinstance(body, Response):
            return body
        return idempotent(request, body, lambda: self._store(request, project, body))

    def _store(self, request: Request, project: Project, body: bytes) -> Response:
        query = JUnitQuery(data=request.query_params)
        if not query.is_valid():
            return input_refused(query, where=QUERY)
        try:
            stored = services.junit_ingest(
                project=project,
                candidate=query.validated_data["candidate"],
                external_id=query.validated_data["run"],
                report=body,
                token=request_token(request),
                user=request_person(request),
                supersede_evidence=query.validated_data.get("supersede_evidence", False),
            )
        except services.IngestError as exc:
            answer: dict[str, Any] = {"detail": exc.message or "bad results"}
            if exc.errors:
                answer["errors"] = exc.errors
            if exc.unmapped is not None:
                answer["unmapped"] = exc.unmapped
            return Response(answer, status=400)
        return Response(
            _import_response(stored.record, stored.record.run, stored.notable, stored.unmapped),
            status=201,
        )


class EvidenceCreatedOutput(serializers.Serializer):
    id = serializers.IntegerField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    name = serializers.CharField()
    content_type = serializers.CharField()


class EvidenceInput(serializers.Serializer):
    file = UploadField(
        allow_empty_file=True,  # refused by the service, which says why
        error_messages={"required": "is required (send it as multipart field 'file')"},
    )


class EvidenceCreateApi(APIView):
    """Attach a file to a result (multipart field `file`)."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": EvidenceInput},
        responses={201: EvidenceCreatedOutput},
    )
    def post(self, request: Request, result_id: int) -> Response:
        result = selectors.result_with_project(result_id)
        if result is None:
            raise Http404
        api_project(request, result.project.slug, scope=TokenScope.RESULTS_WRITE)
        payload = EvidenceInput(data=request.data)
        if not payload.is_valid():
            return input_refused(payload)
        upload = payload.validated_data["file"]
        fingerprint = f"{upload.name}:{upload.size}:".encode() + _sha256(upload)
        return idempotent(request, fingerprint, lambda: self._store(request, result, upload))

    def _store(self, request: Request, result: Any, upload: Any) -> Response:
        from django.core.exceptions import ValidationError

        try:
            evidence = services.evidence_attach_file(
                result=result,
                upload=upload,
                actor=request_person(request),
            )
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=400)
        return Response(EvidenceCreatedOutput(evidence).data, status=201)


def _sha256(upload: Any) -> bytes:
    hexdigest, _size = sha256_chunks(upload.chunks())
    upload.seek(0)
    return hexdigest.encode()
