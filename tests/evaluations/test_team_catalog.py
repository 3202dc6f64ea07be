"""Teams add their own routes and products to the catalog, in both languages; such entries can
be shortlisted, are changed only by whoever added them (or staff), survive seed_catalog, and
travel with a project's archive."""

import io

import pytest
from django.urls import reverse

from evaluations import services
from evaluations.catalog import load_solutions
from evaluations.models import Candidate, Solution

pytestmark = pytest.mark.django_db

PRODUCT = {
    "kind": "product",
    "vendor": "In house",
    "name_en": "Atlas Scheduler",
    "name_zh": "阿特拉斯调度器",
    "summary_en": "Our own control plane on Kubernetes.",
    "summary_zh": "我们自建的 Kubernetes 控制面。",
    "not_suitable_when_en": "Teams outside the platform group must run it.",
    "not_suitable_when_zh": "平台组以外的团队需要自行运维时。",
}


def _route() -> Solution:
    return Solution.objects.get(key="container-native")


def test_a_team_adds_a_product_in_both_languages_and_shortlists_it(suite, login) -> None:
    client = login(suite["alice"])
    response = client.post(reverse("catalog_add"), {**PRODUCT, "route": _route().pk})
    added = Solution.objects.get(name_en="Atlas Scheduler")
    assert response.status_code == 302 and response["Location"].endswith(f"#{added.key}")
    assert added.key == "team-atlas-scheduler" and added.is_team_entry
    assert (added.route, added.added_by, added.vendor) == (_route(), suite["alice"], "In house")
    page = client.get(reverse("catalog")).content.decode()
    assert "Atlas Scheduler" in page and "added by alice" in page
    assert reverse("catalog_edit", args=[added.key]) in page
    chinese = client.get(reverse("catalog"), headers={"Accept-Language": "zh-hans"})
    assert "阿特拉斯调度器" in chinese.content.decode()
    # It is shortlisted like any entry.
    shortlisted = client.post(
        reverse("evaluations:candidate_add", args=["alpha"]),
        {
            "solution": added.pk,
            "tier": "validate_first",
            "decided_by_step": "workload",
            "reason": "ours",
        },
    )
    assert shortlisted.status_code == 302
    assert Candidate.objects.filter(project=suite["alpha"], solution=added).exists()
    # A second entry of the same name gets a key of its own.
    client.post(reverse("catalog_add"), {**PRODUCT, "route": _route().pk})
    assert Solution.objects.filter(key="team-atlas-scheduler-2").exists()


@pytest.mark.parametrize(
    "change, field",
    [
        ({"name_zh": ""}, "name_zh"),
        ({"summary_en": ""}, "summary_en"),
        ({"route": ""}, "route"),
        ({"kind": "route"}, "route"),  # a route on a route
    ],
)
def test_each_text_needs_both_languages_and_a_product_its_route(
    suite, login, change, field
) -> None:
    data = {**PRODUCT, "route": _route().pk, **change}
    before = Solution.objects.count()
    response = login(suite["bob"]).post(reverse("catalog_add"), data)
    assert response.status_code == 422
    assert field in response.context["form"].errors
    assert Solution.objects.count() == before


def test_only_its_author_or_staff_change_an_entry_and_shipped_ones_stay(suite, login) -> None:
    route = services.team_solution_add(
        kind="route",
        route=None,
        vendor="",
        texts={"name_en": "Bare metal pools", "name_zh": "裸金属资源池"},
        actor=suite["alice"],
    )
    url = reverse("catalog_edit", args=[route.key])
    data = {"kind": "route", "name_en": "Bare-metal pools", "name_zh": "裸金属资源池"}
    assert login(suite["bob"]).post(url, data).status_code == 403
    assert login(suite["bob"]).get(url).status_code == 403
    assert login(suite["alice"]).post(url, data).status_code == 302
    route.refresh_from_db()
    assert route.name_en == "Bare-metal pools"
    suite["bob"].is_staff = True
    suite["bob"].save()
    assert login(suite["bob"]).get(url).status_code == 200
    shipped = reverse("catalog_edit", args=["volcano"])
    assert login(suite["bob"]).get(shipped).status_code == 403
    # seed_catalog updates the shipped entries and leaves the team's alone.
    services.catalog_seed(entries=load_solutions())
    route.refresh_from_db()
    assert route.name_en == "Bare-metal pools" and route.added_by == suite["alice"]


def test_a_team_entry_travels_with_the_project_archive(suite) -> None:
    from reports.services.archive import export_project, import_project

    product = services.team_solution_add(
        kind="product",
        route=_route(),
        vendor="In house",
        texts={k: v for k, v in PRODUCT.items() if k.endswith(("_en", "_zh"))},
        actor=suite["alice"],
    )
    Candidate.objects.create(
        project=suite["alpha"], solution=product, slug="atlas", reason="ours", position=9
    )
    archive = io.BytesIO()
    export_project(suite["alpha"], archive)
    Candidate.objects.filter(solution=product).delete()
    product.delete()  # a workbench that never had the entry
    archive.seek(0)
    report = import_project(archive, slug="alpha-copy")
    restored = Solution.objects.get(key=product.key)
    assert (restored.name_zh, restored.route, restored.vendor) == (
        "阿特拉斯调度器",
        _route(),
        "In house",
    )
    assert Candidate.objects.get(project=report.project, slug="atlas").solution == restored
