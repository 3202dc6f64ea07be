"""Structured logs with a request id that follows the work into Celery tasks.

Each request gets an id (the caller's `X-Request-ID` when it is a sane token, else a new one),
answered in the same header. Every log record made while it is handled carries it as
`request_id`, and so does every record of a task that request queued: the id travels in the
task message's headers and is set again when a worker runs the task. `LOG_FORMAT=json` writes
one JSON object per line for log collectors.
"""

import json
import logging
import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest, HttpResponse

REQUEST_ID: ContextVar[str] = ContextVar("request_id", default="")
HEADER = "X-Request-ID"
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,64}")

_make_record = logging.getLogRecordFactory()


def _record_with_request_id(*args: Any, **kwargs: Any) -> logging.LogRecord:
    record = _make_record(*args, **kwargs)
    record.request_id = REQUEST_ID.get()
    return record


logging.setLogRecordFactory(_record_with_request_id)


class RequestIdFilter(logging.Filter):
    """Make sure every record has `request_id` (records made before this module loaded)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        return True


def new_request_id(offered: str | None = None) -> str:
    if offered and _SANE.fullmatch(offered):
        return offered
    return uuid.uuid4().hex


class RequestIdMiddleware:
    """Set the request id for everything done for this request; Django's own request log
    (written after the middleware returns) still carries it: the id is cleared when the
    response is finished, not when this middleware returns."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = new_request_id(request.headers.get(HEADER))
        REQUEST_ID.set(request_id)
        response = self.get_response(request)
        response[HEADER] = request_id
        return response


def _clear(**kwargs: Any) -> None:
    REQUEST_ID.set("")


def connect_request_signals() -> None:
    from django.core.signals import request_finished

    request_finished.connect(_clear, weak=False, dispatch_uid="workbench.logs.clear")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC), level, logger, message, request id, exception."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", "")
        if request_id:
            document["request_id"] = request_id
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return json.dumps(document, ensure_ascii=False)


# Celery: the id rides in the message headers and is set again around the task.


def _on_publish(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    request_id = REQUEST_ID.get()
    if headers is not None and request_id and "request_id" not in headers:
        headers["request_id"] = request_id


_task_tokens: dict[str, Any] = {}


def _on_task_start(task_id: str = "", task: Any = None, **kwargs: Any) -> None:
    request = getattr(task, "request", None)
    offered = getattr(request, "request_id", None) or (getattr(request, "headers", None) or {}).get(
        "request_id"
    )
    _task_tokens[task_id] = REQUEST_ID.set(new_request_id(offered) if offered else "")


def _on_task_end(task_id: str = "", **kwargs: Any) -> None:
    token = _task_tokens.pop(task_id, None)
    if token is not None:
        REQUEST_ID.reset(token)


def connect_celery_signals() -> None:
    from celery.signals import before_task_publish, task_postrun, task_prerun

    before_task_publish.connect(_on_publish, weak=False)
    task_prerun.connect(_on_task_start, weak=False)
    task_postrun.connect(_on_task_end, weak=False)
