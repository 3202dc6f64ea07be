"""Redis stopped in the middle of a CI load: a redis-server of the test's own is both the cache
(the API's rate-limit counters) and the broker, and is killed after the first 300 of 1,000 result
posts, then started again for the last 300. Every post is stored once (0 lost, 0 duplicated, each
cell's history chain whole), the API answers 201 throughout, and the sheet render asked for
while Redis was down waits in its row and is sent by the beat's first tick after Redis is back:
one message, never a second."""

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.db.models import Count

from evaluations.api.throttling import CallerRateThrottle
from poc.models import (
    Result,
    Run,
)
from reports import services
from reports.models import Sheet, SheetStatus
from tests.poc.api_helpers import payload, post_results, token_client
from tests.probes.clusters.test_outbox import Broker, broker  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db

POSTS, DOWN_AT, UP_AT = 1000, 300, 700
OUTCOMES = ("passed", "failed")


@pytest.fixture
def redis_cache(broker: Broker, settings: Any) -> Iterator[Broker]:  # noqa: F811
    """The same redis-server as the cache: the rate limits read and write it on every call."""
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": broker.url,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        },
    }
    yield broker


def _row(number: int, evaluation: dict[str, Any]) -> dict[str, Any]:
    actions = [action.key for action in evaluation["actions"]]
    row: dict[str, Any] = {
        "candidate": "volcano",
        "action": actions[number % len(actions)],
        "outcome": OUTCOMES[number % 2],
    }
    if row["outcome"] == "failed":
        row["failure_cause"] = f"post {number}"
    return row


def test_a_thousand_ci_posts_through_a_redis_outage_lose_and_duplicate_nothing(
    evaluation: dict[str, Any],
    redis_cache: Broker,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Budget enough for the load: the limit itself is not under test here.
    monkeypatch.setattr(CallerRateThrottle, "THROTTLE_RATES", {"caller": "100000/minute"})
    client, _token, _raw = token_client(evaluation["alpha"])
    before = Result.objects.count()  # the evaluation's own few results
    statuses: Counter[int] = Counter()
    sheet_id = None

    for number in range(POSTS):
        if number == DOWN_AT:
            redis_cache.stop()
            # Asked for during the outage: saved, the render waits in the row.
            with django_capture_on_commit_callbacks(execute=True):
                asked = client.post(
                    "/api/v1/projects/alpha/sheets/", {"language": "en"}, format="json"
                )
            assert asked.status_code == 202, asked.content
            sheet_id = asked.json()["id"]
        if number == UP_AT:
            redis_cache.start()
        response = post_results(
            client,
            "alpha",
            payload([_row(number, evaluation)], run=f"nightly-{number}"),
            **{"Idempotency-Key": f"load-{number}"},
        )
        statuses[response.status_code] += 1
        assert response.status_code == 201, (number, response.content[:300])
    assert statuses == {201: POSTS}
    # The rate limits did count in this Redis while it was up (the outage was a real one).
    assert redis.Redis.from_url(redis_cache.url).keys("*throttle_caller_token-*")

    # 0 lost, 0 duplicated: one run and one result per post, each post's own cause kept.
    assert Run.objects.count() == POSTS
    assert Result.objects.count() == before + POSTS
    causes = Counter(
        Result.objects.filter(run__isnull=False, outcome="failed").values_list(
            "failure_cause", flat=True
        )
    )
    assert causes == Counter(f"post {n}" for n in range(POSTS) if n % 2)
    # Replays of posts made while Redis was down give the stored answer and store nothing new.
    for number in range(DOWN_AT, DOWN_AT + 20):
        again = post_results(
            client,
            "alpha",
            payload([_row(number, evaluation)], run=f"nightly-{number}"),
            **{"Idempotency-Key": f"load-{number}"},
        )
        assert again.status_code == 201
    assert Result.objects.count() == before + POSTS and Run.objects.count() == POSTS
    # Each cell's history is one chain: a single first result, every other one linked once.
    cells = Result.objects.values("candidate", "action").annotate(n=Count("pk"))
    assert Result.objects.filter(previous=None).count() == cells.count()
    linked = Result.objects.exclude(previous=None).values_list("previous", flat=True)
    assert len(set(linked)) == len(linked) == before + POSTS - cells.count()

    # The render asked for during the outage waited, and the beat's next tick sends it once.
    sheet = Sheet.objects.get(pk=sheet_id)
    assert (sheet.status, sheet.unsent) == (SheetStatus.PENDING, True)
    tick = django_settings.CELERY_BEAT_SCHEDULE["sheet-resend"]
    assert tick["task"] == "reports.tasks.sheets_resend_task" and tick["schedule"] <= 60
    assert services.sheets_resend() == [sheet.pk]
    assert redis_cache.queued("reports") == 1
    assert services.sheets_resend() == [] and redis_cache.queued("reports") == 1
    sheet.refresh_from_db()
    assert not sheet.unsent and sheet.status == SheetStatus.PENDING
