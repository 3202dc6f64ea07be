"""A job sent from the web side is executed by a real worker process.

Two set-ups: the embedded default (SQLite + kombu's filesystem broker, what `make run` uses) and
the production one (PostgreSQL + Redis).
"""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.workers import ROOT, celery_worker, wait_until, worker_database_url
from workbench.celery import app as celery_app
from workbench.models import WorkerCheck

WEB_SIDE = """
import django; django.setup()
from django.contrib.auth import get_user_model
from django.test import Client
user, _ = get_user_model().objects.get_or_create(username="ops-admin", defaults={"is_staff": True})
client = Client(SERVER_NAME="localhost")
client.force_login(user)
response = client.post("/status/checks/")
assert response.status_code == 302, response.status_code
print(response["Location"].rstrip("/").rsplit("/", 1)[-1])
"""


@pytest.mark.worker
def test_embedded_default_runs_jobs_in_a_real_worker(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")
    }
    env.update({"WORKBENCH_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "workbench.settings"})
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert migrate.returncode == 0, migrate.stderr
    database = tmp_path / "workbench.sqlite3"
    assert database.exists()

    with celery_worker(
        {
            "WORKBENCH_VAR_DIR": str(tmp_path),
            "DATABASE_URL": "",
            "REDIS_URL": "",
            "CELERY_BROKER_URL": "",
        }
    ) as worker:
        web = subprocess.run(
            [sys.executable, "-c", WEB_SIDE],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert web.returncode == 0, web.stderr
        check_id = int(web.stdout.strip())
        # The message went through the file queue, not through any server.
        assert (tmp_path / "broker" / "queue").is_dir()

        def answered() -> bool:
            with sqlite3.connect(database) as conn:
                row = conn.execute(
                    "SELECT completed_at, worker_hostname FROM workbench_workercheck WHERE id = ?",
                    (check_id,),
                ).fetchone()
            return row is not None and row[0] is not None

        try:
            wait_until(answered, what="the worker to answer the check")
        except AssertionError:
            worker.terminate()
            raise AssertionError(worker.communicate(timeout=15)[0][-3000:]) from None
        # Exchange tables live under the var folder too, not in whatever folder it ran from.
        assert list((tmp_path / "broker" / "control").glob("*.exchange"))


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_postgres_and_redis_run_jobs_in_a_real_worker(client) -> None:
    assert celery_app.conf.broker_url.startswith("redis://")
    celery_app.control.purge()
    database_url = worker_database_url()
    staff = get_user_model().objects.create_user("ops-admin", is_staff=True)
    client.force_login(staff)
    with celery_worker({"DATABASE_URL": database_url}) as worker:
        response = client.post(reverse("worker_check_create"))
        assert response.status_code == 302
        check = WorkerCheck.objects.get()

        def answered() -> bool:
            check.refresh_from_db()
            return check.completed_at is not None

        try:
            wait_until(answered, what="the worker to answer the check")
        except AssertionError:
            worker.terminate()
            raise AssertionError(worker.communicate(timeout=15)[0][-3000:]) from None
    assert check.worker_hostname
    page = client.get(
        reverse("worker_check_detail", args=[check.pk]), headers={"HX-Request": "true"}
    )
    assert page.status_code == 200
    assert check.worker_hostname in page.content.decode()
    assert "hx-trigger" not in page.content.decode()  # finished: the row stops polling


@pytest.mark.django_db
def test_status_pages_are_for_staff_only(client) -> None:
    user = get_user_model().objects.create_user("someone")
    client.force_login(user)
    assert client.get(reverse("system_status")).status_code == 403
    assert client.post(reverse("worker_check_create")).status_code == 403
    assert not WorkerCheck.objects.exists()
