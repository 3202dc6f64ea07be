"""POST results: all or nothing, errors by index, runs that append, change classification."""

import json

import pytest

from evaluations import services as evaluation_services
from poc.models import (
    Evidence,
    Result,
    ResultCell,
    Run,
    RunImport,
)
from tests.poc.api_helpers import payload, post_results, token_client

pytestmark = pytest.mark.django_db


def _rows(suite, outcome="passed"):
    return [
        {
            "candidate": "volcano",
            "action": a.key,
            "outcome": outcome,
            **({"failure_cause": "boom"} if outcome == "failed" else {}),
        }
        for a in suite["actions"]
    ]


def test_bulk_post_stores_results_and_reports_changes(suite) -> None:
    client, token, _ = token_client(suite["alpha"])
    response = post_results(
        client,
        "alpha",
        payload(
            [
                *_rows(suite)[:2],
                {
                    "candidate": "volcano",
                    "action": "cross-tenant",
                    "outcome": "needs_integration",
                    "note": "see **ticket**",
                    "evidence_urls": ["https://ci.example/job/1"],
                    "integration": {
                        "what": "LDAP sync",
                        "owner_team": "platform",
                        "effort_days": 2.5,
                    },
                },
            ],
            name="nightly",
            url="https://ci.example/p/1",
            commit="abc123",
            candidate="volcano",
        ),
    )
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["stored"] == 3
    assert data["changes"] == {
        "new": 3,
        "unchanged": 0,
        "changed": 0,
        "regressed": 0,
        "recovered": 0,
    }
    run = Run.objects.get()
    assert (run.external_id, run.name, run.commit, run.candidate.slug) == (
        "pipeline-1",
        "nightly",
        "abc123",
        "volcano",
    )
    integration = Result.objects.get(outcome="needs_integration")
    assert (integration.integration_effort_days, integration.source, integration.run) == (
        pytest.approx(2.5),
        "ci",
        run,
    )
    assert Evidence.objects.get().url == "https://ci.example/job/1"
    assert ResultCell.objects.get(result=integration).evidence_count == 1
    assert RunImport.objects.get().token == token
    matrix = client.get("/api/v1/projects/alpha/matrix/").json()
    assert len(matrix["cells"]) == 3  # one candidate in alpha x three actions
    assert matrix["totals"]["volcano"] == {
        "passed": 2,
        "failed": 0,
        "not_covered": 0,
        "needs_integration": 1,
    }
    cell = next(c for c in matrix["cells"] if c["action"] == "cross-tenant")
    assert cell["result_id"] == integration.pk


def test_one_bad_row_stores_nothing_and_every_bad_row_is_listed(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    rows = [
        *_rows(suite),
        {"candidate": "nobody", "action": "quota-hit", "outcome": "passed"},
        {"candidate": "volcano", "action": "no-such-key", "outcome": "great"},
        {"candidate": "volcano", "action": "quota-hit", "outcome": "failed"},
        {
            "candidate": "volcano",
            "action": "quota-hit",
            "outcome": "needs_integration",
            "integration": {"what": "", "owner_team": "aliens", "effort_days": "lots"},
        },
        "not an object",
    ]
    response = post_results(client, "alpha", payload(rows))
    assert response.status_code == 400
    errors = {e["index"]: e["errors"] for e in response.json()["errors"]}
    assert set(errors) == {3, 4, 5, 6, 7}
    # An unknown key is answered with the keys that exist.
    candidates = ", ".join(sorted(suite["alpha"].candidates.values_list("slug", flat=True)))
    assert errors[3]["candidate"] == (
        f"unknown candidate 'nobody' in this project; its candidates are: {candidates}"
    )
    assert errors[4]["action"] == (
        "unknown action key 'no-such-key' in this project; its action keys are: "
        "cross-tenant, quota-hit, real-job"
    )
    assert "great" in errors[4]["outcome"]
    assert "failure cause" in errors[5]["failure_cause"]
    assert set(errors[6]) == {
        "integration.what",
        "integration.owner_team",
        "integration.effort_days",
    }
    assert not Result.objects.exists() and not Run.objects.exists()


def test_bulk_rows_and_single_results_lack_the_same_things_in_the_same_words(suite) -> None:
    """One rule (poc.models.outcome_detail_problems) for the model and bulk ingest, which skips
    full_clean: the same lacking fields, named in the same words, in the reader's language."""
    from django.core.exceptions import ValidationError

    from poc import services as poc_services

    client, _, _ = token_client(suite["alpha"])
    row = {"candidate": "volcano", "action": "quota-hit", "outcome": "needs_integration"}
    for language in ("en", "zh-hans"):
        answer = post_results(client, "alpha", payload([row]), **{"Accept-Language": language})
        bulk = answer.json()["errors"][0]["errors"]
        from django.utils import translation

        with translation.override(language), pytest.raises(ValidationError) as single:
            poc_services.result_record(
                candidate=suite["volcano"],
                action=suite["actions"][0],
                outcome="needs_integration",
                actor=None,
            )
        assert bulk == {
            "integration.what": single.value.message_dict["integration_what"][0],
            "integration.owner_team": single.value.message_dict["integration_owner_team"][0],
            "integration.effort_days": single.value.message_dict["integration_effort_days"][0],
        }
    assert "人天" in bulk["integration.effort_days"]  # the Chinese answer is in Chinese
    assert not Result.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"results": []},
        {"run": {}, "results": [{}]},
        {"run": {"external_id": "x"}, "results": []},
        {"run": {"external_id": "x"}, "results": "nope"},
        [],
    ],
)
def test_malformed_requests_are_400(suite, body) -> None:
    client, _, _ = token_client(suite["alpha"])
    assert post_results(client, "alpha", body).status_code == 400
    assert not Result.objects.exists()


def test_not_json_is_a_clear_error(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    response = client.post(
        "/api/v1/projects/alpha/results/", "{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


def test_batch_limit(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    row = {"candidate": "volcano", "action": "quota-hit", "outcome": "passed"}
    response = post_results(client, "alpha", payload([row] * 5001))
    assert response.status_code == 400
    assert "at most 5000" in response.json()["detail"]
    assert post_results(client, "alpha", payload([row] * 5000)).status_code == 201
    assert ResultCell.objects.get().result_count == 5000


def test_body_limit(suite, settings) -> None:
    settings.API_MAX_BODY_BYTES = 200
    client, _, _ = token_client(suite["alpha"])
    response = post_results(client, "alpha", payload(_rows(suite) * 3))
    assert response.status_code == 413
    assert not Result.objects.exists()


def test_reposting_a_run_appends_and_classifies_changes(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    assert post_results(client, "alpha", payload(_rows(suite))).status_code == 201
    rows = _rows(suite, "failed")[:2] + [_rows(suite)[2]]
    data = post_results(client, "alpha", payload(rows)).json()
    assert data["changes"]["regressed"] == 2 and data["changes"]["unchanged"] == 1
    assert {c["action"] for c in data["regressed"]} == {"quota-hit", "real-job"}
    data = post_results(client, "alpha", payload(_rows(suite)[:1])).json()
    assert data["changes"]["recovered"] == 1
    assert data["recovered"] == [{"candidate": "volcano", "action": "quota-hit"}]
    run = Run.objects.get()
    assert run.imports.count() == 3 and run.results.count() == 7
    history = client.get(f"/api/v1/runs/{run.pk}/").json()
    assert [i["regressed"] for i in history["imports"]] == [0, 2, 0]


def test_renamed_keys_still_work(suite) -> None:
    evaluation_services.action_update(action=suite["actions"][0], actor=None, key="quota-limit")
    client, _, _ = token_client(suite["alpha"])
    response = post_results(
        client,
        "alpha",
        payload([{"candidate": "volcano", "action": "quota-hit", "outcome": "passed"}]),
    )
    assert response.status_code == 201
    assert Result.objects.get().action == suite["actions"][0]


def test_run_of_another_project_is_404(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    post_results(client, "alpha", payload(_rows(suite)))
    run = Run.objects.get()
    beta_client, _, _ = token_client(suite["beta"])
    assert beta_client.get(f"/api/v1/runs/{run.pk}/").status_code == 404
    assert client.get("/api/v1/runs/999999/").status_code == 404


def test_evidence_upload_through_the_api(suite, settings, tmp_path) -> None:
    client, _, _ = token_client(suite["alpha"])
    post_results(client, "alpha", payload(_rows(suite)[:1]))
    result = Result.objects.get()
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = client.post(
        f"/api/v1/results/{result.pk}/evidence/",
        {"file": SimpleUploadedFile("run.log", b"all good")},
        format="multipart",
    )
    assert response.status_code == 201
    assert response.json()["size"] == 8
    empty = client.post(
        f"/api/v1/results/{result.pk}/evidence/",
        {"file": SimpleUploadedFile("e.log", b"")},
        format="multipart",
    )
    assert empty.status_code == 400
    beta_client, _, _ = token_client(suite["beta"])
    assert (
        beta_client.post(
            f"/api/v1/results/{result.pk}/evidence/",
            {"file": SimpleUploadedFile("x.log", b"x")},
            format="multipart",
        ).status_code
        == 404
    )
    assert Evidence.objects.count() == 1
    assert json.loads(json.dumps(response.json()))["sha256"]


def test_the_portable_insert_path_stores_the_same(suite, monkeypatch) -> None:
    """Development runs on SQLite, where bulk writes go through the ORM instead of unnest()."""
    from django.db import connection

    client, _, _ = token_client(suite["alpha"])
    monkeypatch.setattr(connection, "vendor", "sqlite")
    rows = [
        *_rows(suite),
        {
            "candidate": "volcano",
            "action": "quota-hit",
            "outcome": "failed",
            "failure_cause": "x",
            "evidence_urls": ["https://ci.example/1"],
        },
    ]
    assert post_results(client, "alpha", payload(rows)).status_code == 201
    monkeypatch.undo()
    cell = ResultCell.objects.get(action=suite["actions"][0])
    assert (cell.outcome, cell.result_count, cell.evidence_count) == ("failed", 2, 1)
    assert cell.result.failure_cause == "x"
    assert Evidence.objects.get().result == cell.result
    assert Result.objects.count() == 4


def test_keys_match_without_regard_to_case_and_a_near_miss_is_suggested(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    response = post_results(
        client,
        "alpha",
        payload([{"candidate": "Volcano", "action": "QUOTA-HIT", "outcome": "passed"}]),
    )
    assert response.status_code == 201, response.content
    result = Result.objects.select_related("candidate", "action").get()
    assert (result.candidate.slug, result.action.key) == ("volcano", "quota-hit")
    assert Run.objects.get().candidate is None  # the run named none
    missed = post_results(
        client,
        "alpha",
        payload([{"candidate": "volcano", "action": "quota-hti", "outcome": "passed"}], run="b"),
    )
    (error,) = missed.json()["errors"]
    assert "(did you mean 'quota-hit'?)" in error["errors"]["action"]
