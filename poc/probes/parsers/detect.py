"""Which output a text is, from its content (`detect`) or from the command that made it
(`command_kind`, kept here for its callers; it reads the registry in formats.py).

Detection looks at the structure that identifies each output, never at values, trying the
formats in the order of formats.DETECTION (each format's own rule is its `recognise` there):

* smi-xml: XML whose root element is <nvidia_smi_log> (other XML is refused).
* capture: command sections, either blocks of `#####` lines naming `# $ command` or
  `# phase :: title`, or a text that opens with a `$ command` line, or a terminal transcript:
  a text that opens with a shell prompt (`root@gpu01:~#`, `[user@node01 ~]$`, `gpu01:~ #`,
  PowerShell's, cmd.exe's, ...; a typescript's "Script started on" header may come first),
  or holds two prompts after a login banner, and runs a tool the parsers read at one of its
  prompts (see transcripts.py). One prompt line over an output the other rules recognise is
  that output.
* bundle: a JSON object naming the format "workbench-probe-bundle/...".
* dcgm-json: JSON holding "DCGM GPU Diagnostic", "DCGM Diagnostic" or "test_categories",
  possibly after a line of text.
* smi-version: nothing but the "label : value" lines of `nvidia-smi --version`
  ("NVIDIA-SMI version", "NVML version", "DRIVER version", "CUDA Version").
* smi-text: the "NVSMI LOG" banner, or a "GPU 00000000:3B:00.0" block header line; or a
  fragment of a GPU block without that line (sections such as "ECC Errors" or "Remapped
  Rows" as pasted into a ticket; see smi_shape).
* nvlink-errors / nvlink-status: "GPU N: name (UUID: ...)" lines (some drivers leave the
  UUID out), maybe after title lines without a colon, followed by "Link N: ..."
  lines holding counters ("Replay Errors: 0") or speeds ("26.562 GB/s", "<inactive>"), or the
  driver's "does not have or support Nvlink".
* smi-list: nothing but "GPU N: name (UUID: ...)" lines and their "MIG ..." lines.
* query-csv: a first line that is a --query-gpu header (field names, at least one known).
* kernel-log: an Xid line, or a text that is mostly kernel log lines (dmesg, journalctl and
  syslog prefixes, journalctl's own marker lines), or journalctl's or dmesg's JSON.

A text that opens with "{" is one of the formats that may be JSON, or refused.
"""

from . import formats
from . import values as v
from .formats import KINDS, XML_START, Sample, command_kind
from .transcripts import prompt_command, strip_terminal, transcript_prompts
from .values import ParseError

__all__ = ["KINDS", "command_kind", "detect"]


def detect(data: str) -> str:
    """The kind of output `data` is (one of KINDS); ParseError when it is none of them."""
    text = v.clean_text(data)
    stripped = text.lstrip()
    if not stripped:
        raise ParseError("empty input")
    if XML_START.match(stripped):
        if formats.SMI_XML_ROOT in text:
            return "smi-xml"
        raise ParseError("not nvidia-smi output: XML without an <nvidia_smi_log> element")
    sample = Sample.of(text, opens_json=stripped[0] == "{")
    if formats.CAPTURE.recognise(sample):
        return "capture"
    prompts = transcript_prompts(sample.head)
    if prompts == 1 and any(
        prompt_command(strip_terminal(line)) is not None for line in sample.rest
    ):
        prompts = 2  # the next command comes after a long output
    if prompts == 1:
        # One command line over its output (`# dmesg | grep -i xid` and the Xid line): what
        # the output is, when its lines tell; else the one section a capture reads.
        try:
            return _content_kind(sample)
        except ParseError:
            return "capture"
    if prompts:
        return "capture"
    return _content_kind(sample)


def _content_kind(sample: Sample) -> str:
    """The kind `detect` finds from the lines of an output that is not a capture."""
    for found in formats.DETECTION:
        if found is formats.CAPTURE or (sample.opens_json and not found.json):
            continue
        if found.recognise(sample):
            return found.key
    if sample.opens_json:
        raise ParseError("JSON that is neither a probe bundle nor dcgmi diag -j output")
    first = sample.lines[0]
    if "," in first and len(first.split(",")) >= 2:
        raise ParseError(
            "comma-separated values without a --query-gpu header"
            " (for noheader output, give the field list)"
        )
    raise ParseError(f"not nvidia-smi output: {first.strip()[:120]}")
