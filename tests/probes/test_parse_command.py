"""`manage.py parse_gpu_output FILE...` prints facts and health, or one line of reason."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.probes.helpers import H200, ROOT, XID_79


def test_prints_facts_and_health_as_json(capsys) -> None:
    call_command("parse_gpu_output", str(H200 / "nvidia-smi-q-idle.xml"), "--expected-gpus", "2")
    document = json.loads(capsys.readouterr().out)
    assert document["facts"]["gpus"][0]["uuid"] == "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"
    assert document["facts"]["expected_gpu_count"] == 2
    assert document["health"]["verdict"] == "failed"


def test_several_files_of_one_node_are_merged(capsys) -> None:
    call_command(
        "parse_gpu_output", str(H200 / "nvidia-smi-q-idle.xml"), str(XID_79), "--host", "n1"
    )
    document = json.loads(capsys.readouterr().out)
    assert document["facts"]["host"] == "n1"
    assert len(document["facts"]["gpus"]) == 1
    assert [x["code"] for x in document["facts"]["xid_events"]] == [79]


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"\x00\x01\xff\xfe binary", "binary"), (b"just some prose", ""), (b"", "")],
)
def test_bad_input_exits_non_zero_with_one_line(tmp_path: Path, content, reason) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(content)
    with pytest.raises(CommandError) as caught:
        call_command("parse_gpu_output", str(path))
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and reason in message


def test_a_utf16_file_is_read(tmp_path: Path, capsys) -> None:
    path = tmp_path / "smi.xml"
    path.write_bytes((H200 / "nvidia-smi-q-idle.xml").read_text().encode("utf-16"))
    call_command("parse_gpu_output", str(path))
    document = json.loads(capsys.readouterr().out)
    assert document["facts"]["gpus"][0]["uuid"] == "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="nope.xml"):
        call_command("parse_gpu_output", str(tmp_path / "nope.xml"))


def test_the_command_line_exit_status(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.xml"
    garbage.write_text("<nvidia_smi_log><gpu")
    done = subprocess.run(
        [sys.executable, "manage.py", "parse_gpu_output", str(garbage)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_standard_input_over_the_limit_says_too_large_with_its_size() -> None:
    """A pipe over the limit is cut mid-character where it was read up to the limit; it is
    named too large, with its size, never "binary"."""
    from poc.probes.parsers import MAX_INPUT_BYTES

    size = MAX_INPUT_BYTES + 3 * 1024 * 1024 + 1  # an odd count of two-byte characters
    done = subprocess.run(
        [sys.executable, "manage.py", "parse_gpu_output", "-"],
        cwd=ROOT,
        input=("é" * (size // 2)).encode() + b"x",
        capture_output=True,
        timeout=120,
    )
    message = done.stderr.decode().strip()
    assert done.returncode != 0 and len(message.splitlines()) == 1, message
    assert f"too large ({size / 1048576:.1f} MB, limit {MAX_INPUT_BYTES >> 20} MB)" in message
    assert "binary" not in message


def test_a_file_over_the_limit_says_too_large_with_its_size(tmp_path: Path, monkeypatch) -> None:
    from poc.probes import parsers

    monkeypatch.setattr(parsers, "MAX_INPUT_BYTES", 1024 * 1024)
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * (3 * 1024 * 1024))
    with pytest.raises(CommandError, match=r"too large \(3\.0 MB, limit 1 MB\)"):
        call_command("parse_gpu_output", str(path))
    with pytest.raises(parsers.ParseError, match=r"too large \(3\.0 MB, limit 1 MB\)"):
        parsers.parse_output(b"x" * (3 * 1024 * 1024))
