from typing import Any

import factory
from django.contrib.auth import get_user_model

from evaluations.models import Candidate, Project, Solution


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password("correct horse battery staple")


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    name = factory.Sequence(lambda n: f"Project {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")


class CandidateFactory(factory.django.DjangoModelFactory):
    """A shortlist entry for a catalog solution named by key (the catalog must be loaded)."""

    class Meta:
        model = Candidate
        exclude = ("solution_key",)

    solution_key = "volcano"
    project = factory.SubFactory(ProjectFactory)
    solution = factory.LazyAttribute(lambda o: Solution.objects.get(key=o.solution_key))
    slug = factory.LazyAttribute(lambda o: o.solution_key)
    reason = "Fits the container platform we run."

    @classmethod
    def _create(cls, model_class: type[Candidate], *args: Any, **kwargs: Any) -> Candidate:
        candidate = model_class(*args, **kwargs)
        candidate.full_clean()
        candidate.save()
        return candidate


def make_actions(
    project: Project,
    actions: list[tuple[str, str]],
    *,
    feature: str = "Quotas",
    dimension: str = "tenancy",
    owner_team: str = "platform",
) -> tuple[Any, list[Any]]:
    """A requirement with acceptance actions given as (key, scenario), through the services."""
    from evaluations import services

    requirement = services.requirement_create(
        project=project, actor=None, feature=feature, dimension=dimension, owner_team=owner_team
    )
    created = [
        services.action_create(
            requirement=requirement,
            actor=None,
            key=key,
            question=f"{key}?",
            pass_criterion="ok",
            scenario=scenario,
        )
        for key, scenario in actions
    ]
    return requirement, created
