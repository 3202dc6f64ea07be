"""Output serializers shared by several endpoints (each documents and shapes its answers)."""

from rest_framework import serializers


class ChangeCountsOutput(serializers.Serializer):
    new = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    changed = serializers.IntegerField()
    regressed = serializers.IntegerField()
    recovered = serializers.IntegerField()


class CellRefOutput(serializers.Serializer):
    candidate = serializers.SlugField()
    action = serializers.CharField()
