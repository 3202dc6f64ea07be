"""A CI post on a cell a person filled keeps the person's evidence: it is carried forward onto
the pipeline's result (marked with where it came from) unless the post says it supersedes it,
and the sheet's evidence index lists both kinds."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from poc import services
from poc.models import Evidence, ResultCell
from reports.snapshot import build_snapshot
from tests.poc.api_helpers import payload, post_results, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def person_cell(suite):
    """A cell a person decided, with a file and a link as evidence."""
    action = suite["actions"][0]
    result = services.result_record(
        candidate=suite["volcano"],
        action=action,
        outcome="failed",
        actor=suite["bob"],
        failure_cause="quota ignored",
    )
    services.evidence_attach_file(
        result=result, upload=SimpleUploadedFile("quota.log", b"quota log\n"), actor=suite["bob"]
    )
    services.evidence_attach_link(
        result=result, url="https://wiki.example/quota", name="quota write-up", actor=suite["bob"]
    )
    return action, result


def _post(suite, action, run, **row):
    client, _token, _raw = token_client(suite["alpha"])
    response = post_results(
        client,
        "alpha",
        payload([{"candidate": "volcano", "action": action.key, "outcome": "passed", **row}], run),
    )
    assert response.status_code == 201, response.content
    return ResultCell.objects.select_related("result").get(
        candidate=suite["volcano"], action=action
    )


def _index(suite):
    snapshot = build_snapshot(suite["alpha"], language="en", candidate_slugs=[])
    return [e for e in snapshot["evidence"] if e["candidate"] == "volcano"]


def test_ci_post_carries_the_persons_evidence_onto_its_result(suite, person_cell) -> None:
    action, person_result = person_cell
    cell = _post(suite, action, "nightly-1", evidence_urls=["https://ci.example/1"])
    assert cell.result.source == "ci" and cell.outcome == "passed"
    carried = Evidence.objects.filter(result=cell.result, carried_from__isnull=False)
    assert sorted(e.name for e in carried) == ["quota write-up", "quota.log"]
    assert {e.carried_from.result_id for e in carried} == {person_result.pk}
    assert {e.uploaded_by for e in carried} == {suite["bob"]}  # who recorded it, kept
    assert not any(e.superseded for e in carried)
    # The pipeline's own link and the two carried items count as the cell's evidence.
    assert cell.evidence_count == 3
    # The frozen index lists them, marked, beside the pipeline's own evidence.
    index = _index(suite)
    assert sorted((e["name"], e.get("carried_from_result")) for e in index) == [
        ("https://ci.example/1", None),
        ("quota write-up", person_result.pk),
        ("quota.log", person_result.pk),
    ]
    # The carried file is the person's file: same content, downloadable from the new result.
    file_copy = carried.get(kind="file")
    original = Evidence.objects.get(result=person_result, kind="file")
    assert (file_copy.sha256, file_copy.file.name) == (original.sha256, original.file.name)


def test_carried_evidence_travels_on_through_later_posts_from_its_origin(
    suite, person_cell
) -> None:
    action, person_result = person_cell
    _post(suite, action, "nightly-1", evidence_urls=["https://ci.example/1"])
    cell = _post(suite, action, "nightly-2")
    names = sorted(
        (e.name, e.carried_from.result_id) for e in Evidence.objects.filter(result=cell.result)
    )
    # The person's two items, still pointing at the person's result; the first pipeline's own
    # link stays with its run.
    assert names == [("quota write-up", person_result.pk), ("quota.log", person_result.pk)]
    assert cell.evidence_count == 2


def test_a_post_that_supersedes_keeps_the_evidence_listed_as_superseded(suite, person_cell) -> None:
    action, person_result = person_cell
    cell = _post(suite, action, "nightly-1", supersedes_evidence=True)
    items = Evidence.objects.filter(result=cell.result)
    assert items.count() == 2 and all(e.superseded for e in items)
    assert cell.evidence_count == 0
    index = _index(suite)
    assert {(e["name"], e.get("superseded")) for e in index} == {
        ("quota.log", True),
        ("quota write-up", True),
    }
    # A later post does not bring it back as evidence.
    again = _post(suite, action, "nightly-2")
    assert again.evidence_count == 0
    assert all(e.superseded for e in Evidence.objects.filter(result=again.result))


def test_a_bad_supersede_flag_is_refused_by_row_and_nothing_is_stored(suite, person_cell) -> None:
    action, _result = person_cell
    client, _token, _raw = token_client(suite["alpha"])
    response = post_results(
        client,
        "alpha",
        payload(
            [
                {
                    "candidate": "volcano",
                    "action": action.key,
                    "outcome": "passed",
                    "supersedes_evidence": "yes",
                }
            ]
        ),
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"index": 0, "errors": {"supersedes_evidence": "must be true or false"}}
    ]
    assert Evidence.objects.filter(carried_from__isnull=False).count() == 0


def test_junit_post_supersedes_on_request_and_refuses_a_bad_flag(suite, person_cell) -> None:
    action, _result = person_cell
    client, _token, _raw = token_client(suite["alpha"])
    report = (f'<testsuite><testcase name="{action.key}" classname="poc"/></testsuite>').encode()
    url = "/api/v1/projects/alpha/junit/?candidate=volcano&run=j1"
    bad = client.post(url + "&supersede_evidence=maybe", report, content_type="application/xml")
    assert bad.status_code == 400 and "supersede_evidence" in bad.json()["detail"]
    good = client.post(url + "&supersede_evidence=true", report, content_type="application/xml")
    assert good.status_code == 201, good.content
    cell = ResultCell.objects.get(candidate=suite["volcano"], action=action)
    assert cell.evidence_count == 0
    assert Evidence.objects.filter(result_id=cell.result_id, superseded=True).count() == 2


def test_a_person_sees_carried_evidence_marked_in_the_cell(suite, person_cell, login) -> None:
    action, _result = person_cell
    _post(suite, action, "nightly-1")
    page = login(suite["bob"]).get(
        reverse(
            "poc:cell",
            kwargs={"slug": "alpha", "candidate_slug": "volcano", "action_id": action.pk},
        ),
        headers={"HX-Request": "true"},
    )
    assert page.status_code == 200
    text = page.content.decode()
    assert text.count("carried forward") == 2 and "recorded by bob" in text
