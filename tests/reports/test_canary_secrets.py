"""Canary secrets: an API token, cluster credentials and the signing passphrase are used the
way the product uses them (results posted, clusters listed and probed, a run queued, a sheet
sealed), then searched for in a dump of the database, the logs, the history, the queued task
messages and every API answer. They must appear nowhere."""

import json
import logging
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from celery.signals import before_task_publish
from django.db import connection

from evaluations.models import ProjectEvent
from poc.probes.services import clusters as cluster_services
from reports import services
from reports.signing import create_self_signed_p12
from tests.poc.api_helpers import payload, post_results, token_client
from tests.reports.helpers import approve_all, rendered

pytestmark = pytest.mark.django_db(transaction=True)

CANARY = "canary-5ecre7-b1rd"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _Published:
    """Every task message the product sends, as the broker would get it (body, headers)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, body: Any = None, headers: Any = None, **extra: Any) -> None:
        self.texts.append(json.dumps([body, headers, extra.get("properties")], default=str))


def test_canary_secrets_appear_nowhere(
    evaluation: dict[str, Any], settings: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    published = _Published()
    before_task_publish.connect(published, weak=False)
    passphrase = f"pass-{CANARY}"
    p12 = tmp_path / "canary.p12"
    create_self_signed_p12(p12, passphrase, subject="Canary Organisation")
    settings.SHEET_SIGNING_P12, settings.SHEET_SIGNING_PASSPHRASE = str(p12), passphrase
    alpha = evaluation["alpha"]
    answers: list[str] = []

    # An API token, used for good and bad requests.
    client, _token, raw_token = token_client(
        alpha, scopes=("read", "results:write", "probes:write", "clusters:run")
    )
    rows = [{"candidate": "volcano", "action": "quota-hit", "outcome": "passed"}]
    answers.append(post_results(client, "alpha", payload(rows)).content.decode())
    answers.append(post_results(client, "alpha", {"results": "junk"}).content.decode())
    answers.append(client.get("/api/v1/projects/alpha/").content.decode())

    # Cluster credentials: stored, listed, tested, probed (the API refuses: unreachable).
    port = _closed_port()
    kube = cluster_services.cluster_save(
        project=alpha,
        data=cluster_services.ClusterData(
            name="k8s",
            kind="kubernetes",
            candidate=evaluation["volcano"],
            api_url=f"http://127.0.0.1:{port}",
        ),
        secrets={"bearer_token": f"tok-{CANARY}", "ca_pem": ""},
        actor=evaluation["alice"],
    )
    ssh = cluster_services.cluster_save(
        project=alpha,
        data=cluster_services.ClusterData(
            name="nodes",
            kind="ssh",
            candidate=evaluation["volcano"],
            hosts=f"127.0.0.1:{port}",
            ssh_user="probe",
        ),
        secrets={"ssh_password": f"pw-{CANARY}"},
        actor=evaluation["alice"],
    )
    answers.append(client.get("/api/v1/projects/alpha/clusters/").content.decode())
    cluster_services.cluster_test_connection(cluster=kube, actor=None)
    started = client.post(f"/api/v1/clusters/{kube.pk}/runs/", {}, format="json")
    answers.append(started.content.decode())
    cluster_services.probe_run_execute(run_id=json.loads(answers[-1])["id"])
    cluster_services.cluster_test_connection(cluster=ssh, actor=None)

    # The signing passphrase: a sheet rendered, approved and sealed.
    sheet = rendered(evaluation)
    approve_all(evaluation, sheet)
    sealed = services.sheet_seal(sheet_id=sheet.pk)
    assert sealed is not None and sealed.status == "sealed", sealed and sealed.error

    dump = subprocess.run(
        ["pg_dump", "-h", "127.0.0.1", "-U", "postgres", connection.settings_dict["NAME"]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "poc_cluster" in dump and len(dump) > 10_000  # a real dump of the data
    history = "\n".join(
        f"{e.subject} {json.dumps(e.before)} {json.dumps(e.after)}"
        for e in ProjectEvent.objects.all()
    )
    before_task_publish.disconnect(published)
    queued = "\n".join(published.texts)
    logs = caplog.text
    places = {
        "database dump": dump,
        "logs": logs,
        "history": history,
        "queued task messages": queued,
        "API answers": "\n".join(answers),
    }
    assert queued, "no task message was captured"
    for secret in (raw_token, f"tok-{CANARY}", f"pw-{CANARY}", passphrase, CANARY):
        found = [name for name, text in places.items() if secret in text]
        assert found == [], (secret, found)
