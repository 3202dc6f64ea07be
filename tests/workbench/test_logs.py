"""Request ids: answered in X-Request-ID, on every log record of the request, carried in the
messages of the tasks it queued into a real worker's logs; JSON lines for log collectors."""

import json
import logging

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.workers import celery_worker, wait_until, worker_database_url
from workbench.celery import app as celery_app
from workbench.logs import JsonFormatter
from workbench.models import WorkerCheck


@pytest.mark.django_db
def test_each_request_has_an_id_and_its_logs_carry_it(client, caplog) -> None:
    first = client.get("/accounts/login/")
    assert len(first["X-Request-ID"]) == 32
    assert client.get("/accounts/login/")["X-Request-ID"] != first["X-Request-ID"]
    kept = client.get("/accounts/login/", headers={"X-Request-ID": "lb-7f3a:0001"})
    assert kept["X-Request-ID"] == "lb-7f3a:0001"  # the load balancer's id is kept
    odd = client.get("/accounts/login/", headers={"X-Request-ID": "x" * 65})
    assert odd["X-Request-ID"] != "x" * 65 and len(odd["X-Request-ID"]) == 32
    client.force_login(get_user_model().objects.create_user("someone"))
    with caplog.at_level(logging.WARNING, logger="django.request"):
        missing = client.get("/projects/nowhere-at-all/", headers={"X-Request-ID": "trace-404"})
    assert missing.status_code == 404
    logged = [r for r in caplog.records if r.name == "django.request"]
    assert logged and all(r.request_id == "trace-404" for r in logged)
    # Outside a request, no id.
    assert (
        logging.getLogger("x").makeRecord("x", logging.INFO, "f", 1, "m", (), None).request_id == ""
    )


def test_json_lines() -> None:
    logger = logging.getLogger("workbench.test")
    record = logger.makeRecord(
        "workbench.test", logging.ERROR, "f", 1, "probe %s 失败", ("n1",), None
    )
    record.request_id = "abc"
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "ERROR" and line["logger"] == "workbench.test"
    assert line["message"] == "probe n1 失败" and line["request_id"] == "abc"
    assert line["time"].endswith("+00:00")
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        failed = logger.makeRecord("w", logging.ERROR, "f", 1, "m", (), sys.exc_info())
    assert "ValueError: boom" in json.loads(JsonFormatter().format(failed))["exception"]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_task_queued_by_a_request_logs_with_its_id_in_a_real_worker(client) -> None:
    assert celery_app.conf.broker_url.startswith("redis://")
    celery_app.control.purge()
    database_url = worker_database_url()
    staff = get_user_model().objects.create_user("ops-admin", is_staff=True)
    client.force_login(staff)
    with celery_worker({"DATABASE_URL": database_url, "LOG_FORMAT": "json"}) as worker:
        response = client.post(
            reverse("worker_check_create"), headers={"X-Request-ID": "trace-worker-42"}
        )
        assert response.status_code == 302
        check = WorkerCheck.objects.get()

        def answered() -> bool:
            check.refresh_from_db()
            return check.completed_at is not None

        wait_until(answered, what="the worker to answer the check")
        worker.terminate()
        output = worker.communicate(timeout=15)[0]
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    answered_line = [x for x in lines if x["message"].startswith(f"worker check {check.pk} ")]
    assert answered_line, output[-3000:]
    assert answered_line[0]["request_id"] == "trace-worker-42"
    assert answered_line[0]["logger"] == "workbench.services"
