"""A new revision reads the project once for its snapshot and its fingerprint: the snapshot is
still in the sheet's language (library texts included, in the evidence index too) and the
fingerprint is the one staleness compares, as if built on its own."""

from typing import Any

import pytest

from evaluations.models import AcceptanceAction
from poc.models import Result
from poc.services import evidence_attach_link
from reports.snapshot import (
    content_fingerprint,
    snapshot_and_hash,
    snapshot_with_fingerprint,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def bilingual(evaluation: dict[str, Any]) -> dict[str, Any]:
    quota = AcceptanceAction.objects.get(pk=evaluation["actions"][0].pk)
    AcceptanceAction.objects.filter(pk=quota.pk).update(
        translations={"question": {"en": quota.question, "zh": "配额用满时会怎样？"}}
    )
    result = Result.objects.filter(candidate=evaluation["volcano"], action=quota).latest("pk")
    evidence_attach_link(result=result, url="https://ci.example/run/7", name="run 7", actor=None)
    return evaluation


@pytest.mark.parametrize("language", ["zh-hans", "en"])
def test_the_snapshot_and_its_fingerprint_match_separate_passes(bilingual, language) -> None:
    alpha = bilingual["alpha"]
    snapshot, text, digest, fingerprint = snapshot_with_fingerprint(
        alpha, language=language, candidate_slugs=[]
    )
    alone, alone_text, alone_digest = snapshot_and_hash(
        alpha, language=language, candidate_slugs=[]
    )
    assert (snapshot, text, digest) == (alone, alone_text, alone_digest)
    assert fingerprint == content_fingerprint(alpha, candidate_slugs=[])
    (item,) = snapshot["evidence"]
    question = "配额用满时会怎样？" if language == "zh-hans" else bilingual["actions"][0].question
    assert item["question"] == question
    asked = {a["key"]: a["question"] for a in snapshot["matrix"]["actions"]}
    assert asked[bilingual["actions"][0].key] == question
