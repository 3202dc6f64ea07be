"""Writes of the cost model over the API (scope `costs:write`, or a person who may edit
terms): the project's model set at once, cost lines added in bulk (all or nothing, each bad
line named) and removed one at a time. docs/costs.md says what every field means."""

from dataclasses import fields as dataclass_fields
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations.api.access import request_token
from reports.procurement import services
from reports.procurement.api import editor_project
from reports.procurement.lines_io import COLUMNS, MAX_ROWS, Row
from reports.procurement.models import CostLine

ZERO = Decimal(0)
MODEL_FIELDS = [f.name for f in dataclass_fields(services.ModelData)]


class CostModelInput(serializers.Serializer):
    """The cost model as a whole; a field left out takes its default (docs/costs.md)."""

    currency = serializers.CharField(max_length=3, default="USD")
    horizon_years = serializers.IntegerField(default=5)
    discount_rate_percent = serializers.DecimalField(
        max_digits=12, decimal_places=4, required=False, allow_null=True, default=None
    )
    gpus = serializers.DecimalField(max_digits=24, decimal_places=4, default=ZERO)
    nodes = serializers.DecimalField(max_digits=24, decimal_places=4, default=ZERO)
    cores_per_node = serializers.DecimalField(max_digits=24, decimal_places=4, default=ZERO)
    sockets_per_node = serializers.DecimalField(max_digits=24, decimal_places=4, default=ZERO)
    named_users = serializers.DecimalField(max_digits=24, decimal_places=4, default=ZERO)
    gpu_hours_per_year = serializers.DecimalField(max_digits=24, decimal_places=4, default=ZERO)
    growth_percent = serializers.DecimalField(max_digits=12, decimal_places=4, default=ZERO)
    fte_cost = serializers.DecimalField(
        max_digits=24, decimal_places=4, required=False, allow_null=True, default=None
    )
    day_rates = serializers.DictField(
        child=serializers.DecimalField(max_digits=24, decimal_places=4), default=dict
    )
    exchange_rates = serializers.DictField(
        child=serializers.DictField(child=serializers.CharField(max_length=300)),
        default=dict,
        help_text='Per currency: {"rate": "1.10", "date": "2026-12-01", "source": "ECB"}.',
    )
    capacity = serializers.ChoiceField(choices=["", "owned", "cloud"], default="")
    gpu_price = serializers.DecimalField(
        max_digits=24, decimal_places=4, required=False, allow_null=True, default=None
    )
    depreciation_years = serializers.IntegerField(required=False, allow_null=True, default=None)
    gpu_hour_price = serializers.DecimalField(
        max_digits=24, decimal_places=4, required=False, allow_null=True, default=None
    )
    baseline_label = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default=""
    )
    baseline_utilisation_percent = serializers.DecimalField(
        max_digits=12, decimal_places=4, required=False, allow_null=True, default=None
    )


class SavedOutput(serializers.Serializer):
    saved = serializers.BooleanField()


class CostModelApi(APIView):
    """Set the project's cost model (made on its first save)."""

    @extend_schema(request=CostModelInput, responses={200: SavedOutput})
    def put(self, request: Request, slug: str) -> Response:
        project = editor_project(request, slug)
        given = CostModelInput(data=request.data)
        given.is_valid(raise_exception=True)
        data = services.ModelData(**{k: given.validated_data[k] for k in MODEL_FIELDS})
        try:
            services.cost_model_save(project=project, data=data, actor=_actor(request))
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=400)
        return Response({"saved": True})


class CostLineInput(serializers.Serializer):
    """One cost line: the columns of the import template (docs/costs.md)."""

    candidate = serializers.CharField(max_length=60, help_text="A candidate's key, or baseline.")
    category = serializers.CharField(max_length=40)
    kind = serializers.CharField(max_length=40)
    low = serializers.CharField(max_length=40)
    expected = serializers.CharField(max_length=40)
    high = serializers.CharField(max_length=40)
    currency = serializers.CharField(max_length=3, required=False, allow_blank=True)
    unit = serializers.CharField(max_length=40, required=False, allow_blank=True)
    team = serializers.CharField(max_length=40, required=False, allow_blank=True)
    discount_percent = serializers.CharField(max_length=40, required=False, allow_blank=True)
    first_year = serializers.CharField(max_length=10, required=False, allow_blank=True)
    last_year = serializers.CharField(max_length=10, required=False, allow_blank=True)
    charge_category = serializers.CharField(max_length=20, required=False, allow_blank=True)
    basis = serializers.CharField(max_length=20, required=False, allow_blank=True)
    reference = serializers.CharField(max_length=300, required=False, allow_blank=True)
    valid_until = serializers.CharField(max_length=10, required=False, allow_blank=True)

    def get_fields(self) -> dict[str, serializers.Field]:
        # `label` and `source` name attributes of a serializer field, so they are added here.
        fields = super().get_fields()
        fields["label"] = serializers.CharField(max_length=200, help_text="What the line is.")
        fields["source"] = serializers.CharField(
            max_length=500, required=False, allow_blank=True, help_text="Where it was read."
        )
        return fields

    def to_internal_value(self, data: Any) -> Any:
        # Numbers may come as JSON numbers: read them as the text they are.
        if isinstance(data, dict):
            data = {
                k: str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
                for k, v in data.items()
            }
        return super().to_internal_value(data)


class CostLinesInput(serializers.Serializer):
    lines = CostLineInput(many=True, allow_empty=False, max_length=MAX_ROWS)  # type: ignore[call-arg]


class AddedOutput(serializers.Serializer):
    added = serializers.IntegerField()


class CostLinesApi(APIView):
    """Add cost lines to candidates and to the baseline; every line checked first, all added
    or none (a 400 names each bad line by its position, the first being line 1)."""

    @extend_schema(request=CostLinesInput, responses={201: AddedOutput})
    def post(self, request: Request, slug: str) -> Response:
        project = editor_project(request, slug)
        given = CostLinesInput(data=request.data)
        given.is_valid(raise_exception=True)
        rows = [
            Row(n, {k: str(line.get(k, "")) for k in COLUMNS})
            for n, line in enumerate(given.validated_data["lines"], start=1)
        ]
        try:
            added = services.cost_lines_import(project=project, rows=rows, actor=_actor(request))
        except ValidationError as exc:
            return Response({"detail": exc.messages}, status=400)
        return Response({"added": added}, status=201)


class CostLineApi(APIView):
    """Remove one cost line."""

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, line_id: int) -> Response:
        project = editor_project(request, slug)
        line = CostLine.objects.filter(project=project, pk=line_id).first()
        if line is None:
            raise Http404
        try:
            services.cost_line_remove(line=line, actor=_actor(request))
        except ValidationError as exc:
            return Response({"detail": " ".join(exc.messages)}, status=400)
        return Response(status=204)


def _actor(request: Request) -> Any:
    return None if request_token(request) else request.user
