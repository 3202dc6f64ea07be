"""The support and compatibility matrix over the API: read with `read`, claims stated with
`costs:write` (in a session: platform, operations, architecture or a project admin)."""

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import api_project, request_token
from evaluations.models import Project, TokenScope
from evaluations.selectors import candidates_in_play, project_access
from poc.probes.combinations import FIELDS
from reports.procurement import selectors, services
from reports.procurement.models import Support


class ClaimOutput(serializers.Serializer):
    status = serializers.ChoiceField(choices=Support.choices)
    known_by = serializers.CharField(help_text="How it is known, in words.")
    probe_run = serializers.IntegerField(allow_null=True)
    note = serializers.CharField()
    at = serializers.DateTimeField(allow_null=True)


class CombinationOutput(serializers.Serializer):
    gpu_model = serializers.CharField()
    driver = serializers.CharField()
    cuda = serializers.CharField()
    runtime = serializers.CharField()
    platform = serializers.CharField()
    scheduler = serializers.CharField()
    status = serializers.ChoiceField(
        choices=Support.choices, help_text="The strongest claim: failed, verified, vendor, tbc."
    )
    claims = ClaimOutput(many=True)


class CandidateMatrixOutput(serializers.Serializer):
    candidate = serializers.SlugField()
    combinations = CombinationOutput(many=True)


class CompatibilityApi(APIView):
    """Every candidate's combinations with every claim on each."""

    @extend_schema(responses=CandidateMatrixOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug)
        matrices = selectors.compatibility_matrix(
            project, candidates_in_play(project, include_all=True)
        )
        data = [
            {
                "candidate": m.candidate.slug,
                "combinations": [
                    {
                        **row.parts,
                        "status": row.status,
                        "claims": [
                            {
                                "status": c.status,
                                "known_by": c.source,
                                "probe_run": c.run_id,
                                "note": c.note,
                                "at": c.at,
                            }
                            for c in row.claims
                        ],
                    }
                    for row in m.rows
                ],
            }
            for m in matrices
        ]
        return Response(CandidateMatrixOutput(data, many=True).data)


class ClaimInput(serializers.Serializer):
    candidate = serializers.SlugField()
    gpu_model = serializers.CharField(max_length=120, required=False, allow_blank=True)
    driver = serializers.CharField(max_length=120, required=False, allow_blank=True)
    cuda = serializers.CharField(max_length=120, required=False, allow_blank=True)
    runtime = serializers.CharField(max_length=120, required=False, allow_blank=True)
    platform = serializers.CharField(max_length=120, required=False, allow_blank=True)
    scheduler = serializers.CharField(max_length=120, required=False, allow_blank=True)
    status = serializers.ChoiceField(
        choices=Support.choices,
        help_text="vendor, failed or tbc: verified is read from probe runs and refused here.",
    )
    reference = serializers.CharField(max_length=300, required=False, allow_blank=True)
    note = serializers.CharField(max_length=2000, required=False, allow_blank=True)


class RecordedOutput(serializers.Serializer):
    recorded = serializers.BooleanField()


def _matrix_editor(request: Request, slug: str) -> Project:
    project = api_project(request, slug, scope=TokenScope.COSTS_WRITE)
    if request_token(request) is None and not selectors.can_edit_matrix(
        project_access(request.user, slug)
    ):
        raise PermissionDenied("claims are stated by platform, ops, architecture or an admin")
    return project


class CompatibilityClaimsApi(APIView):
    """State a claim about one combination of a candidate."""

    @extend_schema(request=ClaimInput, responses={201: RecordedOutput})
    def post(self, request: Request, slug: str) -> Response:
        project = _matrix_editor(request, slug)
        given = ClaimInput(data=request.data)
        given.is_valid(raise_exception=True)
        data: dict[str, Any] = given.validated_data
        candidate = project.candidates.filter(slug__iexact=data["candidate"]).first()
        if candidate is None:
            known = ", ".join(project.candidates.values_list("slug", flat=True))
            return Response(
                {"candidate": [f"{data['candidate']} is not a candidate (one of {known})"]},
                status=400,
            )
        try:
            services.compatibility_claim(
                candidate=candidate,
                stack=services.Stack(**{name: data.get(name, "") for name in FIELDS}),
                status=data["status"],
                reference=data.get("reference", ""),
                note=data.get("note", ""),
                actor=None if request_token(request) else request.user,  # type: ignore[arg-type]
            )
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=400)
        return Response({"recorded": True}, status=201)
