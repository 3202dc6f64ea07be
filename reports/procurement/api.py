"""The procurement API (under /api/v1/): a project's terms and costs for reading (scope `read`),
and a candidate's terms for writing (scope `costs:write`; in a browser session, procurement,
business and project admins). Bad input is answered 400 naming what is wrong; nothing is
half-saved."""

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import api_project, request_token
from evaluations.models import Project, TeamRole, TokenScope
from evaluations.selectors import candidates_in_play, project_access
from reports.procurement import selectors, services
from reports.procurement.models import Basis
from reports.procurement.selectors.costs import CandidateCost
from reports.procurement.terms import TERMS


class TermOutput(serializers.Serializer):
    key = serializers.CharField()
    group = serializers.CharField()
    value = serializers.JSONField(allow_null=True)
    display = serializers.CharField()
    basis = serializers.ChoiceField(choices=Basis.choices)
    reference = serializers.CharField()
    where_read = serializers.CharField(help_text="Where a published figure was read.")
    valid_until = serializers.DateField(allow_null=True)
    applies = serializers.BooleanField()
    to_confirm = serializers.BooleanField()
    quote_expired = serializers.BooleanField()


class CandidateTermsOutput(serializers.Serializer):
    candidate = serializers.SlugField()
    still_to_confirm = serializers.IntegerField()
    terms = TermOutput(many=True)


def _terms_data(candidates: list[Any]) -> list[dict[str, Any]]:
    table = selectors.terms_table(candidates)
    out = []
    for index, candidate in enumerate(table.candidates):
        rows = []
        for group in table.groups:
            for row in group.rows:
                cell = row.cells[index]
                entry = cell.entry
                rows.append(
                    {
                        "key": row.term.key,
                        "group": group.key,
                        "value": entry.value if entry else None,
                        "display": cell.display,
                        "basis": cell.basis,
                        "reference": entry.reference if entry else "",
                        "where_read": entry.source if entry else "",
                        "valid_until": entry.valid_until if entry else None,
                        "applies": cell.applies,
                        "to_confirm": cell.open,
                        "quote_expired": cell.expired,
                    }
                )
        out.append(
            {
                "candidate": candidate.slug,
                "still_to_confirm": table.open_count(candidate),
                "terms": rows,
            }
        )
    return out


class TermsApi(APIView):
    """Every candidate's terms, each with its basis and whether it is still to be confirmed."""

    @extend_schema(responses=CandidateTermsOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug)
        return Response(
            CandidateTermsOutput(
                _terms_data(candidates_in_play(project, include_all=True)), many=True
            ).data
        )


class TermInput(serializers.Serializer):
    key = serializers.ChoiceField(choices=[term.key for term in TERMS])
    value = serializers.JSONField(required=False, allow_null=True, default=None)
    basis = serializers.ChoiceField(choices=Basis.choices, default=Basis.TBC)
    reference = serializers.CharField(required=False, allow_blank=True, default="", max_length=300)
    where_read = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
    valid_until = serializers.DateField(required=False, allow_null=True, default=None)


class TermsInput(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    terms = TermInput(many=True, allow_empty=False, max_length=len(TERMS))  # type: ignore[call-arg]


class TermsRecordedOutput(serializers.Serializer):
    recorded = serializers.IntegerField(
        help_text="How many terms changed (unchanged ones are skipped)."
    )
    candidate = CandidateTermsOutput()


def editor_project(request: Request, slug: str) -> Project:
    project = api_project(request, slug, scope=TokenScope.COSTS_WRITE)
    if request_token(request) is None:
        access = project_access(request.user, slug)
        if not selectors.can_edit_terms(access):
            raise PermissionDenied(
                f"terms are changed by {TeamRole.PROCUREMENT.value}, {TeamRole.BUSINESS.value} "
                "or a project admin"
            )
    return project


class CandidateTermsApi(APIView):
    """Record some of a candidate's terms at once, each with its basis; all or nothing."""

    @extend_schema(request=TermsInput, responses={200: TermsRecordedOutput})
    def post(self, request: Request, slug: str, candidate_slug: str) -> Response:
        project = editor_project(request, slug)
        candidate = (
            project.candidates.filter(slug=candidate_slug).select_related("solution").first()
        )
        if candidate is None:
            raise Http404
        given = TermsInput(data=request.data)
        given.is_valid(raise_exception=True)
        changes = [
            services.TermChange(
                key=term["key"],
                value=term["value"],
                basis=term["basis"],
                reference=term["reference"],
                source=term["where_read"],
                valid_until=term["valid_until"],
            )
            for term in given.validated_data["terms"]
        ]
        try:
            made = services.terms_record(
                candidate=candidate,
                changes=changes,
                actor=None if request_token(request) else request.user,  # type: ignore[arg-type]
                reason=given.validated_data["reason"],
            )
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=400)
        (terms,) = _terms_data([candidate])
        return Response(TermsRecordedOutput({"recorded": len(made), "candidate": terms}).data)


class RangeOutput(serializers.Serializer):
    low = serializers.DecimalField(max_digits=24, decimal_places=2)
    expected = serializers.DecimalField(max_digits=24, decimal_places=2)
    high = serializers.DecimalField(max_digits=24, decimal_places=2)


class BaselineCostOutput(serializers.Serializer):
    name = serializers.CharField(help_text="What runs today, or doing nothing.")
    total = RangeOutput()
    net_present_value = RangeOutput()
    per_year = RangeOutput(many=True)
    incomplete = serializers.ListField(child=serializers.CharField())


class CandidateCostOutput(serializers.Serializer):
    candidate = serializers.SlugField()
    total = RangeOutput()
    list_total = serializers.DecimalField(max_digits=24, decimal_places=2)
    net_present_value = RangeOutput()
    per_gpu_year = RangeOutput(allow_null=True)
    per_used_gpu_hour = RangeOutput(allow_null=True, help_text="The total over the GPU-hours used.")
    against_baseline = RangeOutput(allow_null=True)
    utilisation_percent = serializers.DecimalField(max_digits=7, decimal_places=4, allow_null=True)
    gpus_needed = serializers.ListField(
        child=serializers.DecimalField(max_digits=24, decimal_places=2),
        allow_null=True,
        help_text="GPUs the demand needs at the utilisation: year 1 and the last year.",
    )
    per_year = RangeOutput(many=True)
    incomplete = serializers.ListField(child=serializers.CharField())


class CostsOutput(serializers.Serializer):
    currency = serializers.CharField(allow_null=True)
    horizon_years = serializers.IntegerField(allow_null=True)
    discount_rate_percent = serializers.DecimalField(
        max_digits=7, decimal_places=4, allow_null=True
    )
    capacity = serializers.CharField(allow_null=True, help_text="owned, cloud or empty.")
    cheapest = serializers.SlugField(allow_null=True, help_text="At expected figures.")
    baseline = BaselineCostOutput(allow_null=True)
    candidates = CandidateCostOutput(many=True)


class CostsApi(APIView):
    """Every candidate's cost over the horizon (docs/costs.md); no figures before the project
    has a cost model."""

    @extend_schema(responses=CostsOutput)
    def get(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug)
        overview = selectors.cost_overview(project, candidates_in_play(project, include_all=True))
        model, baseline = overview.model, overview.baseline
        data = {
            "currency": model.currency if model else None,
            "horizon_years": model.horizon_years if model else None,
            "discount_rate_percent": model.discount_rate_percent if model else None,
            "capacity": model.capacity if model else None,
            "cheapest": overview.leader.slug if overview.leader else None,
            "baseline": None
            if baseline is None or model is None
            else {
                "name": model.baseline_label,
                "total": baseline.costs.total,
                "net_present_value": baseline.npv,
                "per_year": baseline.costs.per_year,
                "incomplete": baseline.costs.missing,
            },
            "candidates": [_candidate_costs(c) for c in overview.candidates],
        }
        return Response(CostsOutput(data).data)


def _candidate_costs(c: CandidateCost) -> dict[str, object]:
    return {
        "candidate": c.slug,
        "total": c.costs.total,
        "list_total": c.costs.list_total.expected,
        "net_present_value": c.npv,
        "per_gpu_year": c.per_gpu_year,
        "per_used_gpu_hour": c.per_used_gpu_hour,
        "against_baseline": c.versus_baseline,
        "utilisation_percent": c.utilisation,
        "gpus_needed": c.gpus_needed,
        "per_year": c.costs.per_year,
        "incomplete": c.costs.missing,
    }
