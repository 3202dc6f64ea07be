"""The evaluations API (under /api/v1/): projects, their shortlisted candidates and acceptance
actions, for members' sessions and project tokens alike (a caller that is neither gets 404, as
a non-member)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluations import selectors
from evaluations.api.access import api_project, api_projects


class ProjectOutput(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    phase = serializers.CharField()
    description = serializers.CharField()
    workloads = serializers.ListField(child=serializers.CharField())
    existing_base = serializers.CharField()
    layer_needed = serializers.CharField()
    supplier_needs = serializers.ListField(child=serializers.CharField())


class ProjectListApi(APIView):
    @extend_schema(responses=ProjectOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response(ProjectOutput(api_projects(request), many=True).data)


class ProjectDetailApi(APIView):
    @extend_schema(responses=ProjectOutput)
    def get(self, request: Request, slug: str) -> Response:
        return Response(ProjectOutput(api_project(request, slug)).data)


class CandidateOutput(serializers.Serializer):
    slug = serializers.SlugField()
    solution = serializers.CharField(source="solution.key")
    solution_name = serializers.CharField(source="solution.name_en")
    tier = serializers.CharField()
    version = serializers.CharField()
    reason = serializers.CharField()


class CandidateListApi(APIView):
    @extend_schema(responses=CandidateOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug)
        candidates = selectors.shortlist_candidates(project)
        return Response(CandidateOutput(candidates, many=True).data)


class ActionOutput(serializers.Serializer):
    key = serializers.CharField()
    requirement = serializers.CharField(source="requirement.feature_text")
    requirement_id = serializers.IntegerField()
    dimension = serializers.CharField(source="requirement.dimension")
    owner_team = serializers.CharField(source="requirement.owner_team")
    scenario = serializers.CharField()
    question = serializers.CharField(source="question_text")
    pass_criterion = serializers.CharField(source="pass_criterion_text")


class ActionListApi(APIView):
    """Every acceptance action of a project: the keys a CI job must report on."""

    @extend_schema(
        responses=inline_serializer(
            "ActionList",
            {
                "project": serializers.SlugField(),
                "count": serializers.IntegerField(),
                "actions": ActionOutput(many=True),
            },
        )
    )
    def get(self, request: Request, slug: str) -> Response:
        project = api_project(request, slug)
        data = ActionOutput(selectors.actions_for_project(project), many=True).data
        return Response({"project": project.slug, "count": len(data), "actions": data})
