"""Read API of evaluations: what a CI job needs to discover the keys it must report on."""

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations import selectors


class ActionListApi(APIView):
    """`GET /api/v1/projects/{slug}/actions/`: every acceptance action of a project."""

    class OutputSerializer(serializers.Serializer):
        key = serializers.CharField()
        requirement = serializers.CharField(source="requirement.feature")
        requirement_id = serializers.IntegerField()
        dimension = serializers.CharField(source="requirement.dimension")
        owner_team = serializers.CharField(source="requirement.owner_team")
        scenario = serializers.CharField()
        question = serializers.CharField()
        pass_criterion = serializers.CharField()

    def get(self, request: Request, slug: str) -> Response:
        project = selectors.project_for_user(request.user, slug)
        actions = selectors.actions_for_project(project)
        data = self.OutputSerializer(actions, many=True).data
        return Response({"project": project.slug, "count": len(data), "actions": data})
