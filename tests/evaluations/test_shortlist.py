"""The shortlist: adding candidates, moving them between tiers, the reason rule, history."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse

from evaluations import services
from evaluations.models import Candidate, ProjectEvent, Solution, Tier
from tests.factories import CandidateFactory, ProjectFactory

pytestmark = pytest.mark.django_db


def _update_url(candidate: Candidate) -> str:
    return reverse(
        "evaluations:candidate_update",
        kwargs={"slug": candidate.project.slug, "candidate_slug": candidate.slug},
    )


def test_move_between_tiers_records_history(personas) -> None:
    volcano = personas["volcano"]
    services.candidate_update(candidate=volcano, actor=personas["bob"], tier=Tier.ALTERNATIVE)
    volcano.refresh_from_db()
    assert volcano.tier == Tier.ALTERNATIVE
    event = ProjectEvent.objects.filter(project=personas["alpha"], verb="candidate.moved").get()
    assert event.actor == personas["bob"]
    assert event.before == {"tier": "validate_first"}
    assert event.after == {"tier": "alternative"}


def test_not_applicable_without_reason_is_refused_and_changes_nothing(personas) -> None:
    volcano = personas["volcano"]
    with pytest.raises(ValidationError) as info:
        services.candidate_update(
            candidate=volcano, actor=personas["bob"], tier=Tier.NOT_APPLICABLE, reason="  "
        )
    assert "reason" in info.value.message_dict
    volcano.refresh_from_db()
    assert volcano.tier == Tier.FIRST
    assert volcano.reason == "Fits the container platform we run."
    assert not ProjectEvent.objects.filter(verb="candidate.moved").exists()


def test_add_not_applicable_without_reason_is_refused(personas) -> None:
    with pytest.raises(ValidationError):
        services.candidate_add(
            project=personas["alpha"],
            solution=Solution.objects.get(key="runai"),
            actor=personas["alice"],
            tier=Tier.NOT_APPLICABLE,
        )
    assert not Candidate.objects.filter(project=personas["alpha"], slug="runai").exists()


def test_database_refuses_not_applicable_without_reason(personas) -> None:
    volcano = personas["volcano"]
    with pytest.raises(IntegrityError), transaction.atomic():
        Candidate.objects.filter(pk=volcano.pk).update(tier=Tier.NOT_APPLICABLE, reason="")


def test_a_solution_is_shortlisted_once(personas, login) -> None:
    from evaluations.models import Candidate, ProjectEvent

    events = ProjectEvent.objects.count()
    with pytest.raises(ValidationError) as refused:
        services.candidate_add(
            project=personas["alpha"],
            solution=Solution.objects.get(key="volcano"),
            actor=personas["alice"],
            version="1.13",
        )
    assert "already on the shortlist (volcano)" in refused.value.message_dict["solution"][0]
    assert Candidate.objects.filter(project=personas["alpha"]).count() == 1
    assert ProjectEvent.objects.count() == events
    # Another project may shortlist the same solution.
    other = services.candidate_add(
        project=personas["beta"],
        solution=Solution.objects.get(key="volcano"),
        actor=personas["charlie"],
    )
    assert other.slug == "volcano"


def test_htmx_move_returns_the_shortlist_partial(personas, login) -> None:
    client = login(personas["bob"])
    response = client.post(
        _update_url(personas["volcano"]), {"tier": "alternative"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="shortlist"')
    assert "<html" not in body
    alternative_column = body.split('class="tier tier-alternative"')[1].split("</section>")[0]
    assert 'id="candidate-volcano"' in alternative_column


def test_htmx_move_to_not_applicable_without_reason_opens_the_editor(personas, login) -> None:
    volcano = personas["volcano"]
    Candidate.objects.filter(pk=volcano.pk).update(reason="")
    client = login(personas["bob"])
    response = client.post(
        _update_url(volcano), {"tier": "not_applicable"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422
    body = response.content.decode()
    assert "needs a reason" in body
    assert 'name="reason"' in body  # the inline editor is open on that card
    volcano.refresh_from_db()
    assert volcano.tier == Tier.FIRST


def test_inline_reason_edit(personas, login) -> None:
    client = login(personas["bob"])
    url = _update_url(personas["volcano"])
    editor = client.get(url, headers={"HX-Request": "true"})
    assert editor.status_code == 200
    assert editor.content.decode().lstrip().startswith('<article class="candidate"')
    response = client.post(
        url,
        {"tier": "not_applicable", "reason": "Our teams have no Kubernetes skills yet."},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    candidate = Candidate.objects.get(pk=personas["volcano"].pk)
    assert candidate.tier == Tier.NOT_APPLICABLE
    assert candidate.reason == "Our teams have no Kubernetes skills yet."


def test_plain_post_without_htmx_redirects(personas, login) -> None:
    response = login(personas["bob"]).post(
        _update_url(personas["volcano"]), {"tier": "alternative"}
    )
    assert response.status_code == 302


def test_unknown_tier_is_a_clear_error(personas, login) -> None:
    response = login(personas["bob"]).post(
        _update_url(personas["volcano"]), {"tier": "best"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422
    assert "not one of the available choices" in response.content.decode()


def test_candidate_of_another_project_is_404(personas, login) -> None:
    url = reverse(
        "evaluations:candidate_update", kwargs={"slug": "alpha", "candidate_slug": "slurm"}
    )
    assert login(personas["alice"]).post(url, {"tier": "alternative"}).status_code == 404
    personas["beta_slurm"].refresh_from_db()
    assert personas["beta_slurm"].tier == Tier.FIRST


def test_add_candidate_through_the_form(personas, login) -> None:
    url = reverse("evaluations:candidate_add", kwargs={"slug": "alpha"})
    solution = Solution.objects.get(key="slurm")
    client = login(personas["alice"])
    bad = client.post(
        url,
        {
            "solution": solution.pk,
            "tier": "not_applicable",
            "decided_by_step": "workload",
            "reason": "",
        },
    )
    assert bad.status_code == 200
    assert "needs a reason" in bad.content.decode()
    assert not Candidate.objects.filter(project=personas["alpha"], slug="slurm").exists()
    good = client.post(
        url,
        {
            "solution": solution.pk,
            "tier": "alternative",
            "decided_by_step": "workload",
            "version": "24.05",
            "reason": "HPC",
        },
    )
    assert good.status_code == 302
    assert Candidate.objects.get(project=personas["alpha"], slug="slurm").version == "24.05"


def _page_queries(client, url, django_assert_max_num_queries) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_project_page_query_count_does_not_grow(personas, login, django_assert_max_num_queries):
    client = login(personas["alice"])
    url = reverse("evaluations:project_detail", kwargs={"slug": "alpha"})
    few = _page_queries(client, url, django_assert_max_num_queries)
    for key in ("slurm", "runai", "openshift-ai", "k8s-gpu-operator"):
        CandidateFactory(project=personas["alpha"], solution_key=key)
    assert _page_queries(client, url, django_assert_max_num_queries) == few


def test_project_list_query_count_does_not_grow(personas, login, django_assert_max_num_queries):
    from evaluations.services import membership_set

    client = login(personas["alice"])
    url = reverse("evaluations:project_list")
    few = _page_queries(client, url, django_assert_max_num_queries)
    for _ in range(5):
        project = ProjectFactory()
        membership_set(project=project, user=personas["alice"], role="ops", actor=None)
        CandidateFactory(project=project, solution_key="slurm")
    assert _page_queries(client, url, django_assert_max_num_queries) == few
