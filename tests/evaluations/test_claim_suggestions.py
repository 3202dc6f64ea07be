"""A pasted vendor claim suggests the template library's rewrite that matches it, in either
language; nothing is stored by asking."""

import pytest
from django.urls import reverse

from evaluations import selectors
from evaluations.claims import Candidate, rank, tokens
from evaluations.models import Requirement

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def library(db: None) -> None:
    from evaluations.catalog import load_templates
    from evaluations.services import template_catalog_seed

    template_catalog_seed(sets=load_templates())


def test_tokens_read_words_and_chinese_character_pairs() -> None:
    assert tokens("Supports GPU quotas, MIG & time-slicing!") == [
        "gpu",
        "quota",
        "mig",
        "time-slicing",
    ]
    assert tokens("支持GPU配额") == ["gpu", "支持", "持g", "配额"] or "配额" in tokens(
        "支持GPU配额"
    )


def test_rare_shared_words_outweigh_common_ones() -> None:
    library = [
        Candidate("quota", ["GPU quota per team is enforced", "每个团队的 GPU 配额"]),
        Candidate("mig", ["GPU partitioned with MIG profiles", "MIG 切分"]),
        Candidate("drivers", ["GPU driver versions supported", "GPU 驱动版本"]),
    ]
    best = rank("Native MIG partitioning of every GPU", library)
    assert best[0].key == "mig" and best[0].shared[0] == "mig"
    assert [m.key for m in rank("按团队设置 GPU 配额", library)][0] == "quota"
    assert rank("Award-winning colour themes", library) == []
    assert rank("", library) == [] and rank("GPU quota", []) == []


def test_pasted_claims_get_the_matching_rewrites_and_nothing_is_stored(suite, login) -> None:
    client = login(suite["alice"])
    before = Requirement.objects.count()
    text = (
        "- Fine-grained GPU sharing with MIG\n2. 支持按团队的 GPU 配额\n"
        "* Award-winning colour themes\n"
    )
    suggestions = selectors.claim_suggestions(text)
    assert [s.claim for s in suggestions] == [
        "Fine-grained GPU sharing with MIG",
        "支持按团队的 GPU 配额",
        "Award-winning colour themes",
    ]
    mig = suggestions[0].matches[0]
    assert "mig" in mig[1].shared
    assert "MIG" in mig[0].feature_en or any("MIG" in a.question_en for a in mig[0].actions.all())
    assert suggestions[1].matches, "a Chinese claim finds its rewrite too"
    assert suggestions[2].matches == []
    url = reverse("evaluations:claims_suggest", args=["alpha"])
    fragment = client.post(url, {"text": text}, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in fragment and "Preview and apply" in fragment
    assert (
        reverse("evaluations:template_apply", args=["alpha", mig[0].template_set.key]) in fragment
    )
    assert "write its acceptance actions by hand" in fragment
    page = client.post(url, {"text": text})  # the button, without script
    assert page.status_code == 200 and "<html" in page.content.decode()
    assert Requirement.objects.count() == before
    assert login(suite["charlie"]).post(url, {"text": text}).status_code == 404
    assert login(suite["dave"]).post(url, {"text": text}).status_code == 403  # an observer
    assert client.get(url).status_code == 200
