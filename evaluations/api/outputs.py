"""Output serializers shared by the endpoints of several apps: a cell (candidate, action) and the
change counts of a results post (each endpoint documents and shapes its answers)."""

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
