"""Revisions waiting for the worker are capped per project, per person (over every project, a
person's tokens included) and per instance; one more is refused naming the cap, nothing made."""

from typing import Any

import pytest

from evaluations.services import api_token_create, membership_set
from reports import services
from reports.models import Sheet, SheetStatus

pytestmark = pytest.mark.django_db


def _generate(evaluation: dict[str, Any], person: Any, project: str = "alpha", **kw: Any) -> Sheet:
    return services.sheet_generate(
        acknowledgement="known gaps",
        project=evaluation[project],
        language="en",
        actor=person,
        **kw,
    )


def test_one_person_may_have_so_many_waiting_over_every_project(evaluation, settings) -> None:
    settings.SHEET_RENDERS_PER_PERSON = 2
    bob, alice = evaluation["bob"], evaluation["alice"]
    membership_set(project=evaluation["beta"], user=bob, role="platform", actor=None)
    _generate(evaluation, bob)
    _generate(evaluation, bob, project="beta")
    with pytest.raises(services.TooManyRenders, match="2 sheets you asked for"):
        _generate(evaluation, bob)
    # A token made by the same person counts as theirs; another person is not held up.
    token, _raw = api_token_create(
        project=evaluation["alpha"], name="ci", scopes=["results:write"], actor=bob
    )
    with pytest.raises(services.TooManyRenders, match="you asked for"):
        _generate(evaluation, None, token=token)
    _generate(evaluation, alice)
    assert Sheet.objects.count() == 3
    # Once one is rendered, the person may ask again.
    Sheet.objects.filter(generated_by=bob, project=evaluation["beta"]).update(
        status=SheetStatus.READY
    )
    _generate(evaluation, bob)


def test_the_instance_takes_so_many_at_once(evaluation, settings) -> None:
    settings.SHEET_RENDERS_PER_INSTANCE = 2
    _generate(evaluation, evaluation["bob"])
    _generate(evaluation, evaluation["alice"])
    with pytest.raises(services.TooManyRenders, match="2 sheets are waiting .* on this instance"):
        _generate(evaluation, evaluation["architecture"])
    assert Sheet.objects.count() == 2
