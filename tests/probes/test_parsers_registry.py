"""The registry of the outputs the parsers read (parsers/formats.py): one entry per format, the
detection chain, parse dispatch and command_kind read it, and docs/probes.md lists its inputs in
the order detection tries them. Terminal transcripts are read by parsers/transcripts.py."""

import json

import pytest

from poc.probes import parsers
from poc.probes.parsers import formats
from poc.probes.parsers.formats import DETECTION, FORMAT, FORMATS, KINDS, Sample, command_kind
from poc.probes.parsers.transcripts import invocation, prompt_command
from tests.probes.test_node_commands import docs_table
from tests.probes.test_parsers_formats import kind_samples

SAMPLES = kind_samples()
COMMANDS = (
    "nvidia-smi -q -x",
    "nvidia-smi --query --xml-format",
    "nvidia-smi -q -i 0",
    "sudo nvidia-smi -q | grep -i ecc",
    "nvidia-smi --query-gpu=index,uuid --format=csv,noheader",
    "nvidia-smi --help-query-gpu --query-gpu=index",
    "nvidia-smi -L -q",
    "nvidia-smi nvlink -s -e",
    "nvidia-smi nvlink -L",
    "nvidia-smi -q --version",
    "nvidia-smi --version",
    "nvidia-smi topo -m",
    "dcgmi diag -r 1 -j",
    "dcgmi diag -r 1 -j | grep xid",
    "dcgmi discovery -l xid",
    "dmesg -T | awk '/Xid/'",
    "journalctl -k -b",
    "grep -i xid /var/log/kern.log",
    "kernel log",
    "uname -a",
)


def test_every_format_is_one_entry_that_knows_its_name_rule_and_reader() -> None:
    assert KINDS == tuple(entry.key for entry in FORMATS) == parsers.KINDS
    assert len(set(KINDS)) == len(KINDS) == len(FORMAT)
    assert sorted(entry.key for entry in DETECTION) == sorted(KINDS)
    for entry in FORMATS:
        assert str(entry.name).strip() and str(entry.description).strip(), entry.key
        assert callable(entry.recognise)
    # The bundle is read by parsers.parse_bundle, every other format through its entry.
    assert [entry.key for entry in FORMATS if entry.parse is None] == ["bundle"]
    assert {entry.key for entry in FORMATS if entry.json} == {"bundle", "dcgm-json", "kernel-log"}


@pytest.mark.parametrize("kind", KINDS)
def test_detection_is_the_first_format_of_the_chain_that_recognises_the_text(kind: str) -> None:
    text = SAMPLES[kind]
    stripped = text.lstrip()
    sample = Sample.of(text, opens_json=stripped.startswith("{"))
    first = next(entry.key for entry in DETECTION if entry.recognise(sample))
    assert first == parsers.detect(text) == kind
    assert parsers.parse_output(text, kind=kind)["format"] == "workbench-gpu-facts/1"


def test_parse_dispatch_reads_the_registry() -> None:
    facts = formats.parse_kind("capture", SAMPLES["capture"])
    assert facts["sources"] == ["nvidia-smi -L"] and facts["gpus"]
    with pytest.raises(parsers.ParseError, match="a probe bundle cannot be read as one output"):
        formats.parse_kind("bundle", SAMPLES["bundle"])
    with pytest.raises(parsers.ParseError, match="unknown input kind 'pdf'"):
        formats.parse_kind("pdf", "x")
    fields = command_kind("nvidia-smi --query-gpu=index,name --format=csv,noheader")
    assert fields == ("query-csv", ["index", "name"])
    noheader = formats.parse_command_output(
        "nvidia-smi --query-gpu=index,name --format=csv,noheader", "0, NVIDIA H200\n"
    )
    assert noheader is not None and noheader["gpus"][0]["name"] == "NVIDIA H200"
    assert formats.parse_command_output("nvidia-smi topo -m", "GPU0 X") is None


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_line_makes_one_format_at_most(command: str) -> None:
    run = invocation(command)
    makers = [e.key for e in FORMATS if run and e.made_by is not None and e.made_by(run)]
    assert len(makers) <= 1
    found = command_kind(command)
    assert (found[0] if found else None) == (makers[0] if makers else None)


def test_command_kinds_through_wrappers_and_filters() -> None:
    unread = [c for c in COMMANDS if command_kind(c) is None]
    assert unread == [
        "nvidia-smi --help-query-gpu --query-gpu=index",
        "nvidia-smi nvlink -L",
        "nvidia-smi topo -m",
        "uname -a",
    ]
    assert command_kind("nvidia-smi -L -q") == ("smi-list", None)
    assert command_kind("nvidia-smi nvlink -s -e") == ("nvlink-errors", None)
    assert command_kind("nvidia-smi -q --version") == ("smi-text", None)
    assert command_kind("dcgmi discovery -l xid") == ("kernel-log", None)
    assert command_kind("dmesg -T | awk '/Xid/'") == ("kernel-log", None)
    assert invocation("nvidia-smi -q | awk '{print}'") is None
    run = invocation("sudo -u root time nvidia-smi.exe -q | grep -i ecc")
    assert run is not None and (run.program, run.words) == ("nvidia-smi", ["nvidia-smi.exe", "-q"])
    assert prompt_command("root@gpu01:~# sudo nvidia-smi -q -x") == "sudo nvidia-smi -q -x"
    assert prompt_command("# a comment, not a prompt") is None


def test_a_text_opening_as_json_is_one_of_the_json_formats_or_refused() -> None:
    journal = json.dumps({"__REALTIME_TIMESTAMP": "1", "MESSAGE": "NVRM: Xid (PCI:0000:3b:00): 79"})
    assert parsers.detect(journal) == "kernel-log"
    # Lines another format would take do not count inside a JSON document.
    with pytest.raises(parsers.ParseError, match="neither a probe bundle nor dcgmi"):
        parsers.detect('{\nGPU 00000000:3B:00.0\nNVSMI LOG\n"x": 1}')


def test_blank_lines_past_the_head_are_read_past_not_a_crash() -> None:
    with pytest.raises(parsers.ParseError, match="not nvidia-smi output: nothing here"):
        parsers.detect("\n" * (formats.HEAD_LINES + 1) + "nothing here")
    assert parsers.detect("\n" * 500 + SAMPLES["smi-list"]) == "smi-list"


def test_the_docs_list_every_input_in_the_order_detection_tries_them() -> None:
    kinds = [row[0] for row in docs_table("## Inputs and how they are detected")]
    assert kinds == [entry.key for entry in DETECTION]
