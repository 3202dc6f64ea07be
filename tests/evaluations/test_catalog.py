"""The solution catalog: loaded idempotently, bilingual, shown in the active language."""

from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse
from django.utils import translation

from evaluations.catalog import CatalogError, load_solutions
from evaluations.models import Solution, SolutionKind
from evaluations.services import catalog_seed

pytestmark = pytest.mark.django_db


def _snapshot() -> list[tuple]:
    return list(Solution.objects.order_by("key").values_list())


def test_seed_twice_gives_the_same_rows() -> None:
    out = StringIO()
    call_command("seed_catalog", stdout=out)
    assert "solutions: 17 created" in out.getvalue()
    first = _snapshot()
    out = StringIO()
    call_command("seed_catalog", stdout=out)
    assert "solutions: 0 created, 0 updated, 17 unchanged" in out.getvalue()
    assert _snapshot() == first


def test_seed_restores_edited_rows_and_keeps_ids() -> None:
    call_command("seed_catalog", stdout=StringIO())
    volcano = Solution.objects.get(key="volcano")
    Solution.objects.filter(pk=volcano.pk).update(not_suitable_when_en="edited")
    report = catalog_seed(entries=load_solutions())
    assert (report.created, report.updated, report.unchanged) == (0, 1, 16)
    restored = Solution.objects.get(key="volcano")
    assert restored.pk == volcano.pk
    assert restored.not_suitable_when_en != "edited"


def test_catalog_holds_five_routes_and_the_products_teams_weigh() -> None:
    call_command("seed_catalog", stdout=StringIO())
    routes = set(Solution.objects.filter(kind=SolutionKind.ROUTE).values_list("key", flat=True))
    products = {s.key: s.route.key for s in Solution.objects.filter(kind=SolutionKind.PRODUCT)}
    assert routes == {"container-native", "hpc-batch", "commercial", "cloud-platform", "self-built"}
    assert set(products) == {
        "k8s-gpu-operator",
        "volcano",
        "slurm",
        "runai",
        "openshift-ai",
        "kueue",
        "kuberay",
        "hami",
        "slinky",
        "sagemaker-hyperpod",
        "vertex-ai",
        "azure-ml",
    }
    assert products["slurm"] == products["slinky"] == "hpc-batch"
    assert products["kueue"] == products["hami"] == "container-native"
    assert products["vertex-ai"] == "cloud-platform"
    for solution in Solution.objects.all():
        for field in ("name", "scale", "integration_cost", "operations_owner", "not_suitable_when"):
            assert getattr(solution, f"{field}_en") and getattr(solution, f"{field}_zh"), (
                solution.key,
                field,
            )
        assert len(solution.must_test_items()) >= 3


def test_bad_catalog_file_names_the_entry(tmp_path: Path) -> None:
    entries = load_solutions()
    del entries[6]["not_suitable_when"]["zh-hans"]
    broken = tmp_path / "solutions.yaml"
    broken.write_text(yaml.safe_dump(entries, allow_unicode=True))
    with pytest.raises(
        CatalogError, match=r"entry 7 \(\w[\w-]*\): not_suitable_when has no zh-hans"
    ):
        load_solutions(broken)
    broken.write_text("- key: x\n  kind: product\n  route: nowhere\n")
    with pytest.raises(CatalogError, match="route 'nowhere' is not a route key"):
        load_solutions(broken)
    broken.write_text("key: [unclosed")
    with pytest.raises(CatalogError, match="solutions.yaml"):
        load_solutions(broken)


def test_catalog_page_in_both_languages(personas, login) -> None:
    client = login(personas["bob"])
    english = client.get(reverse("catalog"), headers={"Accept-Language": "en"}).content.decode()
    volcano = Solution.objects.get(key="volcano")
    assert volcano.not_suitable_when_en in english
    assert "Not suitable when" in english
    chinese = client.get(
        reverse("catalog"), headers={"Accept-Language": "zh-Hans"}
    ).content.decode()
    assert volcano.not_suitable_when_zh in chinese
    assert "不适用情况" in chinese
    assert '<html lang="zh-hans">' in chinese


def test_localized_falls_back_to_english() -> None:
    solution = Solution(key="x", kind="route", name_en="Only English", name_zh="")
    with translation.override("zh-hans"):
        assert solution.name == "Only English"
