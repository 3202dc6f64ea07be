"""/metrics in the Prometheus text format: requests by route, queue depth read from the real
broker, the apps' counts from the database; a token or an allowed address, else 403."""

import pytest
import redis
from django.conf import settings as django_settings
from prometheus_client.parser import text_string_to_metric_families

from poc import services as poc_services

pytestmark = pytest.mark.django_db


def scrape(client, **extra) -> dict[str, dict[tuple, float]]:
    response = client.get("/metrics", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    samples: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            key = tuple(sorted(sample.labels.items()))
            samples.setdefault(sample.name, {})[key] = sample.value
    return samples


def test_requests_are_counted_by_route_pattern_not_path(client, suite) -> None:
    client.force_login(suite["bob"])
    for _ in range(3):
        assert client.get("/projects/alpha/").status_code == 200
    assert client.get("/projects/beta/").status_code == 404  # bob is no member of beta
    counted = scrape(client)["workbench_http_requests_total"]
    route = "/projects/<slug:slug>/"
    assert counted[(("method", "GET"), ("route", route), ("status", "200"))] >= 3
    assert counted[(("method", "GET"), ("route", route), ("status", "404"))] >= 1
    assert not any("alpha" in dict(labels)["route"] for labels in counted)
    buckets = scrape(client)["workbench_http_request_duration_seconds_count"]
    assert buckets[(("route", route),)] >= 4


def test_the_apps_counts_and_the_real_queue_depth(client, suite) -> None:
    poc_services.result_record(
        candidate=suite["volcano"], action=suite["actions"][0], outcome="passed", actor=None
    )
    broker = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
    broker.delete("probes")
    broker.lpush("probes", b"{}", b"{}")  # two messages waiting, as the Redis transport keeps them
    try:
        samples = scrape(client)
    finally:
        broker.delete("probes")
    assert samples["workbench_celery_queue_depth"][(("queue", "probes"),)] == 2
    assert (("queue", "reports"),) in samples["workbench_celery_queue_depth"]
    assert samples["workbench_results_recorded"][(("source", "manual"),)] == 1
    # Every state is a series, at 0 until something is in it.
    assert samples["workbench_sheets"][(("state", "sealed"),)] == 0
    assert samples["workbench_probe_runs"][(("state", "done"),)] == 0
    assert samples["workbench_notices_unsent"][(("state", "waiting"),)] == 0


def test_access_needs_the_token_or_an_allowed_address(client, settings) -> None:
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    settings.METRICS_TOKEN = "s3cret-scrape-token"
    assert client.get("/metrics").status_code == 403  # the test client is 127.0.0.1
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
    ok = client.get("/metrics", headers={"Authorization": "Bearer s3cret-scrape-token"})
    assert ok.status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    # Scraped by pod address: no allowed host needed, as for the health probes.
    with_host = client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_HOST="10.1.2.9:8000")
    assert with_host.status_code == 200
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", headers={"Authorization": "Bearer "}).status_code == 403
