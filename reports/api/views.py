"""Sheets over the API: generate (asynchronous), read, download, sign (people only), verify."""

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import (
    api_may_read,
    api_project,
    request_person,
    request_token,
    signed_in_person,
)
from evaluations.api.authentication import BearerTokenAuthentication
from evaluations.api.parsers import DepthSafeJSONParser
from evaluations.models import TokenScope
from reports import selectors, services, signing
from reports.models import Sheet, SheetStatus
from reports.verify import verify_pdf

# --- output: one serializer per answer, used for the response and for the schema -----------


class TokenRefOutput(serializers.Serializer):
    name = serializers.CharField()
    prefix = serializers.CharField()


class SignOffOutput(serializers.Serializer):
    role = serializers.CharField()
    user = serializers.CharField()
    decision = serializers.ChoiceField(choices=["approve", "reject"])
    comment = serializers.CharField(allow_blank=True)
    after_changes = serializers.BooleanField(
        help_text="The project had changed since the freeze when this role decided."
    )
    decided_at = serializers.CharField(help_text="ISO 8601, UTC.")


class ChangeOutput(serializers.Serializer):
    section = serializers.CharField()
    subject = serializers.CharField()
    before = serializers.CharField(allow_blank=True, allow_null=True)
    after = serializers.CharField(allow_blank=True, allow_null=True)


class ChangesOutput(serializers.Serializer):
    total = serializers.IntegerField()
    shown = ChangeOutput(many=True)


class AcknowledgementOutput(serializers.Serializer):
    by = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField()
    reason = serializers.CharField()


class SheetOutput(serializers.Serializer):
    id = serializers.IntegerField()
    project = serializers.SlugField()
    revision = serializers.IntegerField()
    language = serializers.ChoiceField(choices=["en", "zh-hans"])
    status = serializers.ChoiceField(choices=SheetStatus.choices)
    progress = serializers.IntegerField()
    sha256 = serializers.CharField()
    sealed_sha256 = serializers.CharField(allow_null=True)
    candidates = serializers.ListField(child=serializers.CharField())
    layout = serializers.ChoiceField(choices=["decision", "full"])
    gaps = serializers.ListField(
        child=serializers.CharField(),
        help_text="What the review lacked when the revision was frozen, in its language.",
    )
    gaps_acknowledgement = AcknowledgementOutput(
        allow_null=True, help_text="Who acknowledged the gaps, when and why; null while open."
    )
    required_roles = serializers.ListField(child=serializers.CharField())
    one_signer_many_roles = serializers.BooleanField()
    generated_by = serializers.CharField(allow_null=True)
    generated_by_token = TokenRefOutput(allow_null=True)
    error = serializers.CharField(allow_null=True)
    seal_error = serializers.CharField(allow_null=True)
    withdrawn_reason = serializers.CharField(allow_null=True)
    stale = serializers.BooleanField(
        allow_null=True,
        help_text="The project changed after this revision was frozen; null where not checked.",
    )
    signoffs = SignOffOutput(many=True)


class SheetDetailOutput(SheetOutput):
    changes_since_freeze = ChangesOutput(
        allow_null=True, help_text="What changed since the freeze, when the revision is stale."
    )


class SheetSummaryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    revision = serializers.IntegerField()
    language = serializers.ChoiceField(choices=["en", "zh-hans"])
    status = serializers.ChoiceField(choices=SheetStatus.choices)
    sha256 = serializers.CharField()
    sealed_sha256 = serializers.CharField(allow_null=True)
    candidates = serializers.ListField(child=serializers.CharField())
    rejected = serializers.BooleanField()
    created_at = serializers.CharField(help_text="ISO 8601, UTC.")


class SheetListOutput(serializers.Serializer):
    sheets = SheetSummaryOutput(many=True)


class SignOffCreatedOutput(serializers.Serializer):
    role = serializers.CharField()
    decision = serializers.ChoiceField(choices=["approve", "reject"])
    sheet = SheetOutput()


class AttachmentOutput(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    relationship = serializers.CharField(allow_blank=True)
    size = serializers.IntegerField()
    sha256 = serializers.CharField()


class VerifyReportOutput(serializers.Serializer):
    valid = serializers.BooleanField()
    intact = serializers.BooleanField()
    covers_whole_file = serializers.BooleanField()
    signer = serializers.CharField(allow_blank=True)
    signed_at = serializers.CharField(allow_blank=True)
    project = serializers.CharField(allow_blank=True)
    revision = serializers.IntegerField(allow_null=True)
    content_sha256 = serializers.CharField(allow_blank=True)
    matches_stored_snapshot = serializers.BooleanField(allow_null=True)
    matches_sealed_file = serializers.BooleanField(allow_null=True)
    trusted_signer = serializers.BooleanField(allow_null=True)
    attachments = AttachmentOutput(many=True)
    snapshot_attached_matches = serializers.BooleanField(allow_null=True)
    problems = serializers.ListField(child=serializers.CharField())


def _acknowledgement(sheet: Sheet) -> dict[str, Any] | None:
    if sheet.gaps_acknowledged_at is None:
        return None
    by = sheet.gaps_acknowledged_by
    return {
        "by": by.get_username() if by else None,
        "at": sheet.gaps_acknowledged_at.isoformat(),
        "reason": sheet.gaps_reason,
    }


def _sheet_data(sheet: Sheet, *, stale: bool | None = None) -> dict[str, Any]:
    return {
        "id": sheet.pk,
        "project": sheet.project.slug,
        "revision": sheet.revision,
        "language": sheet.language,
        "status": sheet.status,
        "progress": sheet.progress,
        "sha256": sheet.sha256,
        "sealed_sha256": sheet.sealed_sha256 or None,
        "candidates": sheet.candidate_slugs,
        "layout": sheet.layout,
        "gaps": sheet.gaps,
        "gaps_acknowledgement": _acknowledgement(sheet),
        "required_roles": sheet.required_roles,
        # Separation of duties as frozen: may one person decide for several roles?
        "one_signer_many_roles": sheet.one_signer_many_roles,
        "generated_by": sheet.generated_by.get_username() if sheet.generated_by else None,
        "generated_by_token": (
            {"name": sheet.generated_by_token.name, "prefix": sheet.generated_by_token.prefix}
            if sheet.generated_by_token
            else None
        ),
        "error": sheet.error or None,
        "seal_error": sheet.seal_error or None,
        "withdrawn_reason": sheet.withdrawn_reason or None,
        "stale": stale,  # changed since the freeze (sealed ones stay valid); null: not checked
        "signoffs": [
            {
                "role": s.role,
                "user": s.user.get_username(),
                "decision": s.decision,
                "comment": s.comment,
                "after_changes": s.after_changes,
                "decided_at": s.decided_at.isoformat(),
            }
            for s in selectors.signoffs_for_sheet(sheet)
        ],
    }


def _answer(
    output: type[serializers.Serializer], data: dict[str, Any], status: int = 200
) -> Response:
    """A response shaped by its output serializer, the one the schema documents."""
    return Response(output(data).data, status=status)


def _sheet_for_caller(request: Request, sheet_id: int) -> Sheet:
    sheet = selectors.sheet_by_id(sheet_id)
    if sheet is None:
        raise Http404
    api_project(request, sheet.project.slug)
    return sheet


class SheetCreateInput(serializers.Serializer):
    language = serializers.ChoiceField(choices=["zh-hans", "en"])
    candidates = serializers.ListField(child=serializers.SlugField(), required=False, default=list)
    layout = serializers.ChoiceField(
        choices=["decision", "full"],
        required=False,
        default="decision",
        help_text="decision: the short decision document; full: every result printed. The "
        "full record is attached inside the PDF either way.",
    )
    acknowledgement = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=2000,
        help_text="Why the revision is generated although the review is not ready (its gaps "
        "are frozen and printed). Required of a person when there are gaps; a token's revision "
        "waits for a project member to acknowledge them before anyone approves it.",
    )


class SignOffInput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["approve", "reject"])
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    role = serializers.CharField(required=False, default="")
    sha256 = serializers.RegexField(
        r"^[0-9a-f]{64}$",
        required=False,
        help_text="The revision's content hash as the signer read it; refused if it differs.",
    )


class SheetCreateApi(APIView):
    """A project's revisions (newest first), and generating a new one."""

    InputSerializer = SheetCreateInput

    @extend_schema(responses=SheetListOutput)
    def get(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug)
        return _answer(
            SheetListOutput,
            {
                "sheets": [
                    {
                        "id": s.pk,
                        "revision": s.revision,
                        "language": s.language,
                        "status": s.status,
                        "sha256": s.sha256,
                        "sealed_sha256": s.sealed_sha256 or None,
                        "candidates": s.candidate_slugs,
                        "rejected": bool(getattr(s, "rejected", False)),  # annotated
                        "created_at": s.created_at.isoformat(),
                    }
                    for s in selectors.sheets_for_project(project)
                ]
            },
        )

    @extend_schema(
        request=InputSerializer,
        responses={202: SheetOutput},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug, scope=TokenScope.RESULTS_WRITE)
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            sheet = services.sheet_generate(
                project=project,
                language=payload.validated_data["language"],
                candidate_slugs=payload.validated_data["candidates"],
                layout=payload.validated_data["layout"],
                acknowledgement=payload.validated_data["acknowledgement"],
                actor=request_person(request),
                token=request_token(request),
            )
        except services.TooManyRenders as exc:
            return Response(
                {"detail": " ".join(exc.messages)}, status=429, headers={"Retry-After": "30"}
            )
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=400)
        return _answer(SheetOutput, _sheet_data(sheet), status=202)


class SheetDetailApi(APIView):
    @extend_schema(responses=SheetDetailOutput)
    def get(self, request: Request, sheet_id: int) -> Response:
        sheet = _sheet_for_caller(request, sheet_id)
        # Rebuilding the snapshot costs a little: while a worker renders or seals the sheet
        # (clients poll then) staleness is not checked and reads null.
        working = (SheetStatus.PENDING, SheetStatus.RENDERING, SheetStatus.SEALING)
        stale = None if sheet.status in working else selectors.sheet_is_stale(sheet)
        data = _sheet_data(sheet, stale=stale)
        # What a signer reads before deciding on an outdated revision (at most diff.LIMIT rows).
        changes = selectors.changes_since_freeze(sheet) if stale else None
        data["changes_since_freeze"] = (
            None
            if changes is None
            else {
                "total": changes.total,
                "shown": [
                    {
                        "section": c.section,
                        "subject": c.subject,
                        "before": c.before,
                        "after": c.after,
                    }
                    for c in changes.shown
                ],
            }
        )
        return _answer(SheetDetailOutput, data)


class SheetPdfApi(APIView):
    # Declared as a PDF and as plain bytes: generated clients read the second as a file.
    @extend_schema(
        responses={(200, "application/pdf"): bytes, (200, "application/octet-stream"): bytes}
    )
    def get(self, request: Request, sheet_id: int) -> FileResponse:
        sheet = _sheet_for_caller(request, sheet_id)
        return FileResponse(
            selectors.sheet_file(sheet),
            as_attachment=True,
            content_type="application/pdf",
            filename=f"{sheet.project.slug}-r{sheet.revision}.pdf",
        )


class AcknowledgeInput(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


class SheetAcknowledgeApi(APIView):
    """A project member acknowledges the gaps of a revision frozen before the review was
    ready (a person's session, never a token), so that its signers may approve it."""

    authentication_classes = [SessionAuthentication]

    @extend_schema(request=AcknowledgeInput, responses={200: SheetOutput})
    def post(self, request: Request, sheet_id: int) -> Response:
        if request_token(request) is not None:
            raise PermissionDenied("acknowledging needs a person's session, not an API token")
        sheet = _sheet_for_caller(request, sheet_id)
        payload = AcknowledgeInput(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            sheet = services.sheet_acknowledge(
                sheet=sheet, user=signed_in_person(request), reason=payload.validated_data["reason"]
            )
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from None
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=409)
        return _answer(SheetOutput, _sheet_data(sheet))


class SignOffCreateApi(APIView):
    """Signing is a person's act: the browser session (with its CSRF token), never a token."""

    authentication_classes = [SessionAuthentication]
    InputSerializer = SignOffInput

    @extend_schema(
        request=InputSerializer,
        responses={201: SignOffCreatedOutput},
    )
    def post(self, request: Request, sheet_id: int) -> Response:
        if request_token(request) is not None:
            raise PermissionDenied("sign-off needs a person's session, not an API token")
        sheet = _sheet_for_caller(request, sheet_id)
        person = signed_in_person(request)
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        roles = selectors.signing_roles_of(person, sheet)
        role = payload.validated_data["role"] or (next(iter(roles)) if len(roles) == 1 else "")
        if not role:
            return Response(
                {
                    "detail": "you hold several signing roles: name one in 'role'",
                    "roles": sorted(roles),
                }
                if roles
                else {"detail": "you hold no signing role in this project"},
                status=400 if roles else 403,
            )
        try:
            signoff = services.signoff_record(
                sheet=sheet,
                user=person,
                role=role,
                decision=payload.validated_data["decision"],
                comment=payload.validated_data["comment"],
                sheet_sha256=payload.validated_data.get("sha256", sheet.sha256),
            )
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from None
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=409)
        sheet.refresh_from_db()  # the last approval moves it on to sealing
        return _answer(
            SignOffCreatedOutput,
            {"role": signoff.role, "decision": signoff.decision, "sheet": _sheet_data(sheet)},
            status=201,
        )


class VerifyingSessionAuthentication(SessionAuthentication):
    """The session, without DRF's CSRF check: verifying a file changes nothing, and a raw PDF
    body cannot carry a CSRF token. Every other endpoint keeps the check."""

    def enforce_csrf(self, request: Request) -> None:
        return None


class SheetVerifyApi(APIView):
    """Verify a sealed PDF sent as the request body or as multipart field `file`."""

    parser_classes = [MultiPartParser, DepthSafeJSONParser]
    authentication_classes = [BearerTokenAuthentication, VerifyingSessionAuthentication]

    @extend_schema(
        request={"application/octet-stream": {"type": "string", "format": "binary"}},
        responses=VerifyReportOutput,
    )
    def post(self, request: Request) -> Response:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return Response({"detail": "Content-Length is not a number"}, status=400)
        if length > settings.SHEET_VERIFY_MAX_BYTES:
            return Response({"detail": "over 100 MB"}, status=413)
        content_type = request.content_type or ""
        if content_type.startswith("multipart/"):
            upload = request.FILES.get("file")
            if upload is None:
                return Response({"detail": "send the PDF as multipart field 'file'"}, status=400)
            data = upload.read()
        else:
            # Read the stream, not request.body: the body is capped far below a large sheet.
            stream = request.stream
            data = stream.read(settings.SHEET_VERIFY_MAX_BYTES + 1) if stream is not None else b""
            if len(data) > settings.SHEET_VERIFY_MAX_BYTES:
                return Response({"detail": "over 100 MB"}, status=413)
        report = verify_pdf(
            data,
            trusted_pem=signing.trusted_certificate_pem(),
            # Whether a revision is stored here is for those who may read that project.
            may_compare=lambda slug: api_may_read(request, slug),
        )
        return _answer(VerifyReportOutput, report.as_dict())
