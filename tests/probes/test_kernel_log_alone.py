"""A kernel log alone (no nvidia-smi output) gives its health events and leaves the inventory
unknown: it names GPUs that had events, not the node's GPUs, so it never says "No GPU was
found"."""

import json

import pytest
from django.core.management import call_command

from poc.probes.parsers import parse_output
from poc.probes.rules import health
from poc.probes.rules.checks import run_check
from tests.probes.helpers import GPU, XID_79

PLUGIN_LOG = GPU / "logs" / "device-plugin-xid-48-unhealthy.log"

# journalctl -k -o short-iso, in the format journalctl documents; the Xid message is the one of
# the real capture (dmesg-xid-79-fallen-off-bus.txt).
JOURNAL = (
    "2026-12-01T10:00:00+0000 gpu01 kernel: "
    + XID_79.read_text().splitlines()[1]
    + "\n2026-12-01T10:00:01+0000 gpu01 kernel: NVRM: GPU 0000:ca:00.0: GPU has fallen off "
    "the bus.\n"
)


def messages(judged: health.NodeHealth) -> list[str]:
    return [p["message"] for p in health.all_problems(judged)] + [
        c["reason"] for c in judged["could_not_check"]
    ]


def test_a_dmesg_line_alone_gives_the_xid_and_an_unknown_inventory() -> None:
    node = parse_output(XID_79.read_text())
    assert node["gpus"] == [] and node["gpus_listed"] is False
    judged = health.judge_node(node)
    codes = [p["code"] for p in judged["problems"]]
    assert "xid" in codes and "no_gpus" not in codes
    assert judged["verdict"] == "failed"  # Xid 79
    (count,) = [c for c in judged["could_not_check"] if c["code"] == "gpu_count"]
    assert "inventory is unknown" in count["reason"]
    assert not any("No GPU was found" in text for text in messages(judged))


def test_a_journal_and_the_device_plugin_log_alone_too() -> None:
    for text in (JOURNAL, PLUGIN_LOG.read_text()):
        node = parse_output(text)
        judged = health.judge_node(node)
        assert node["xid_events"], text
        assert "no_gpus" not in [p["code"] for p in judged["problems"]]
        assert not any("No GPU was found" in m for m in messages(judged))


def test_the_run_checks_cannot_count_gpus_from_a_kernel_log() -> None:
    node = parse_output(XID_79.read_text())
    for key, params in (
        ("gpu_count_at_least", {"count": 8}),
        ("gpus_per_node_at_least", {"count": 8}),
        ("gpu_model_in", {"models": ["H200"]}),
    ):
        outcome = run_check(key, params, [node])
        assert outcome["status"] == "unable", (key, outcome)
        assert "No GPU was found" not in outcome["detail"]


def test_the_command_prints_the_events_without_no_gpu(capsys) -> None:
    call_command("parse_gpu_output", str(XID_79))
    document = json.loads(capsys.readouterr().out)
    assert [x["code"] for x in document["facts"]["xid_events"]] == [79]
    assert "No GPU was found" not in json.dumps(document)


def test_a_kernel_log_with_a_gpu_listing_still_counts_gpus() -> None:
    from poc.probes.parsers import parse_outputs

    listing = "GPU 0: NVIDIA H200 (UUID: GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e)\n"
    node = parse_outputs([("dmesg", XID_79.read_text()), ("nvidia-smi -L", listing)])
    assert node["gpus_listed"] is True and len(node["gpus"]) == 1
    node["expected_gpu_count"] = 2
    judged = health.judge_node(node)
    assert "fewer_gpus" in [p["code"] for p in judged["problems"]]


@pytest.mark.django_db
def test_the_run_page_says_the_inventory_is_unknown_not_that_no_gpu_was_found(
    personas, login
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from poc.probes.models import ProbeRun

    client = login(personas["bob"])
    log = SimpleUploadedFile("dmesg.txt", XID_79.read_bytes())
    response = client.post(
        "/projects/alpha/probes/upload/", {"candidate": "volcano", "file": log, "host": "gpu01"}
    )
    assert response.status_code == 302, response.content[:500]
    page = client.get(f"/projects/alpha/probes/{ProbeRun.objects.get().pk}/").content.decode()
    assert "Inventory unknown" in page and "No GPU was found." not in page
