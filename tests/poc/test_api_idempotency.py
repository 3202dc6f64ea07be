"""Safe retries: Idempotency-Key replays, refuses a changed body, and holds under concurrency."""

import json
import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from evaluations.models import IdempotencyRecord
from poc.models import (
    Result,
    RunImport,
)
from tests.poc.api_helpers import payload, post_results, token_client


def _rows(suite):
    return [
        {"candidate": "volcano", "action": a.key, "outcome": "passed"} for a in suite["actions"]
    ]


@pytest.mark.django_db
def test_same_key_same_body_replays_and_stores_nothing_new(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    first = post_results(client, "alpha", payload(_rows(suite)), **{"Idempotency-Key": "k-1"})
    second = post_results(client, "alpha", payload(_rows(suite)), **{"Idempotency-Key": "k-1"})
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json()
    assert second["Idempotent-Replayed"] == "true"
    assert Result.objects.count() == 3 and RunImport.objects.count() == 1


@pytest.mark.django_db
def test_same_key_different_body_is_422(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    post_results(client, "alpha", payload(_rows(suite)), **{"Idempotency-Key": "k-2"})
    other = post_results(client, "alpha", payload(_rows(suite)[:1]), **{"Idempotency-Key": "k-2"})
    assert other.status_code == 422
    assert Result.objects.count() == 3


@pytest.mark.django_db
def test_keys_belong_to_their_caller(suite) -> None:
    first, _, _ = token_client(suite["alpha"])
    second, _, _ = token_client(suite["alpha"])
    post_results(first, "alpha", payload(_rows(suite)), **{"Idempotency-Key": "shared"})
    response = post_results(second, "alpha", payload(_rows(suite)), **{"Idempotency-Key": "shared"})
    assert response.status_code == 201
    assert "Idempotent-Replayed" not in response
    assert Result.objects.count() == 6


@pytest.mark.django_db
def test_a_refused_request_is_replayed_as_refused(suite) -> None:
    client, _, _ = token_client(suite["alpha"])
    bad = payload([{"candidate": "volcano", "action": "nope", "outcome": "passed"}])
    assert post_results(client, "alpha", bad, **{"Idempotency-Key": "bad"}).status_code == 400
    again = post_results(client, "alpha", bad, **{"Idempotency-Key": "bad"})
    assert again.status_code == 400 and again["Idempotent-Replayed"] == "true"


@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_identical_posts_store_one_copy(suite) -> None:
    assert connection.vendor == "postgresql"
    _client, _token, raw = token_client(suite["alpha"])
    body = json.dumps(payload(_rows(suite)))
    barrier = threading.Barrier(10)
    statuses: list[int] = []
    replays: list[bool] = []

    def post() -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        barrier.wait()
        try:
            response = client.post(
                "/api/v1/projects/alpha/results/",
                body,
                content_type="application/json",
                headers={"Idempotency-Key": "concurrent-1"},
            )
            statuses.append(response.status_code)
            replays.append(response.get("Idempotent-Replayed") == "true")
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses == [201] * 10
    assert replays.count(False) == 1
    assert Result.objects.count() == 3
    assert RunImport.objects.count() == 1
    assert IdempotencyRecord.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_posts_to_one_new_run_make_one_run(suite) -> None:
    _client, _token, raw = token_client(suite["alpha"])
    barrier = threading.Barrier(10)
    statuses: list[int] = []

    def post(n: int) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        barrier.wait()
        try:
            rows = [
                {
                    "candidate": "volcano",
                    "action": "quota-hit",
                    "outcome": "passed",
                    "note": f"shard {n}",
                }
            ]
            statuses.append(post_results(client, "alpha", payload(rows, run="sharded")).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(n,)) for n in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses == [201] * 10
    from poc.models import (
        ResultCell,
        Run,
    )

    assert Run.objects.count() == 1
    assert Result.objects.count() == 10
    assert ResultCell.objects.get().result_count == 10


@pytest.mark.django_db
def test_kept_responses_are_forgotten_after_the_keep_time(suite, settings) -> None:
    from datetime import timedelta

    from django.conf import settings as django_settings
    from django.utils import timezone

    from evaluations.services.idempotency import idempotency_records_prune

    settings.IDEMPOTENCY_KEEP_HOURS = 48
    client, _, _ = token_client(suite["alpha"])
    post_results(client, "alpha", payload(_rows(suite)), **{"Idempotency-Key": "old"})
    post_results(client, "alpha", payload(_rows(suite)), **{"Idempotency-Key": "fresh"})
    IdempotencyRecord.objects.filter(key="old").update(
        created_at=timezone.now() - timedelta(hours=49)
    )
    assert idempotency_records_prune() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["fresh"]
    # The same key after that is a new request, not a replay.
    again = post_results(client, "alpha", payload(_rows(suite)), **{"Idempotency-Key": "old"})
    assert again.status_code == 201 and "Idempotent-Replayed" not in again
    fresh = post_results(client, "alpha", payload(_rows(suite)), **{"Idempotency-Key": "fresh"})
    assert fresh["Idempotent-Replayed"] == "true"
    beat = django_settings.CELERY_BEAT_SCHEDULE["idempotency-prune"]
    assert beat["task"] == "evaluations.tasks.idempotency_prune_task"
