"""Prometheus metrics at `/metrics`, for the observability a platform team already runs.

- requests by route, method and status, and their latency (a histogram), counted by
  `MetricsMiddleware` with the URL pattern as the route (never the raw path: bounded labels);
- Celery queue depth per declared queue, read from the broker at scrape time;
- what the apps register with `register_counts`: probe runs and sheet renders by state, results
  ingested by source, notices waiting (each app owns its own query; this module imports none).

Under gunicorn with several workers, set `PROMETHEUS_MULTIPROC_DIR` to an empty folder shared by
them: the request figures are then summed across workers. Access: a bearer token
(`METRICS_TOKEN`) or an address in `METRICS_ALLOWED_NETWORKS`; anything else gets 403.
"""

import hmac
import ipaddress
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

REGISTRY = CollectorRegistry(auto_describe=True)
REQUESTS = Counter(
    "workbench_http_requests",
    "HTTP requests answered, by route pattern, method and status.",
    ["route", "method", "status"],
    registry=REGISTRY,
)
RATE_LIMITS_UNCHECKED = Counter(
    "workbench_rate_limit_unchecked",
    "API requests let through without their rate limit because the cache (Redis) could not "
    "be reached.",
    registry=REGISTRY,
)
LATENCY = Histogram(
    "workbench_http_request_duration_seconds",
    "Time to answer an HTTP request, by route pattern.",
    ["route"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=REGISTRY,
)


@dataclass(frozen=True)
class CountSource:
    name: str
    documentation: str
    label: str
    read: Callable[[], Iterable[tuple[str, float]]]
    every: tuple[str, ...] = ()


_SOURCES: list[CountSource] = []


def register_counts(
    name: str,
    documentation: str,
    label: str,
    read: Callable[[], Iterable[tuple[str, float]]],
    *,
    every: Iterable[str] = (),
) -> None:
    """Let an app publish a gauge family read at scrape time: `read` yields (label, value);
    each label in `every` is published even when it has no rows (as 0), so that a state
    appearing does not look like a new series to alerts."""
    if all(s.name != name for s in _SOURCES):
        _SOURCES.append(CountSource(name, documentation, label, read, tuple(every)))


class _ScrapeCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield from _queue_depths()
        for source in _SOURCES:
            family = GaugeMetricFamily(source.name, source.documentation, labels=[source.label])
            try:
                values = dict.fromkeys(source.every, 0.0) | dict(source.read())
                for label, value in values.items():
                    family.add_metric([label], value)
            except Exception:  # a failing query must not take the other metrics with it
                log.warning("metrics: %s could not be read", source.name, exc_info=True)
                continue
            yield family


def _queue_depths() -> Iterator[Metric]:
    from workbench.celery import app

    family = GaugeMetricFamily(
        "workbench_celery_queue_depth", "Messages waiting in each Celery queue.", labels=["queue"]
    )
    try:
        with app.connection_for_read(connect_timeout=2) as conn:
            channel = conn.default_channel
            for queue in settings.CELERY_TASK_QUEUES:
                declared = channel.queue_declare(queue=queue.name)  # idempotent
                family.add_metric([queue.name], declared.message_count)
    except Exception:  # the broker being down is what readiness reports; here it is absent
        log.warning("metrics: queue depths could not be read", exc_info=True)
        return
    yield family


REGISTRY.register(_ScrapeCollector())


def exposition() -> bytes:
    """The text format, summed across gunicorn workers where multi-process mode is on."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        merged = CollectorRegistry()
        multiprocess.MultiProcessCollector(merged)
        merged.register(_ScrapeCollector())
        return generate_latest(merged)
    return generate_latest(REGISTRY)


def allowed(request: HttpRequest) -> bool:
    token = settings.METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer "):
        return hmac.compare_digest(header[len("Bearer ") :].encode(), token.encode())
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in network for network in _networks())


def _networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(n, strict=False) for n in settings.METRICS_ALLOWED_NETWORKS]


def metrics_view(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        return HttpResponse(
            "metrics need METRICS_TOKEN as a bearer token, or an address in "
            "METRICS_ALLOWED_NETWORKS\n",
            status=403,
            content_type="text/plain; charset=utf-8",
        )
    response = HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response


class MetricsMiddleware:
    """Count each answered request under its URL pattern (first, so it times everything)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = ("/" + match.route) if match is not None and match.route else "unmatched"
        if request.path_info in ("/metrics", "/metrics/", "/healthz/", "/readyz/"):
            route = request.path_info
        REQUESTS.labels(route, request.method or "", str(response.status_code)).inc()
        LATENCY.labels(route).observe(time.perf_counter() - started)
        return response
