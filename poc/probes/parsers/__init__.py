"""Parsers: NVIDIA tool output in, the node's fact document (poc.probes.facts) out.

Every function here is pure: no I/O, no clock, no Django (but for the lazily translated names
of the formats). Input that is not something the parsers read raises ParseError, and nothing
else; docs/probes.md describes the inputs, how they are detected and every field of the result.

Each format the parsers read is one entry of the registry in formats.py (its key, name,
description, how it is recognised, which commands make it, how it is read), which names the
module reading it. detect.py tries the formats in turn; transcripts.py knows terminal
transcripts; capture.py reads captures and merges documents; node_commands.py lists the
commands run on a GPU node.
"""

import codecs
import json
from collections.abc import Iterable, Sequence

from poc.probes.facts import NodeFacts

from . import values as v
from .bundle import read_bundle
from .capture import merge_nodes as _merge_nodes
from .detect import detect as _detect
from .formats import KINDS, command_kind, parse_kind
from .values import MAX_INPUT_BYTES, ParseError, clean_text

__all__ = [
    "KINDS",
    "MAX_INPUT_BYTES",
    "PARSER_VERSION",
    "ParseError",
    "decode",
    "detect",
    "merge_nodes",
    "parse_bundle",
    "parse_output",
    "parse_outputs",
]

# Bump when the facts read from the same input change, so stored documents can be re-read.
PARSER_VERSION = "4"


def too_large(size: int) -> str:
    """The refusal of an input over MAX_INPUT_BYTES: its size and the limit, in MB."""
    return f"too large ({size / (1024 * 1024):.1f} MB, limit {MAX_INPUT_BYTES // (1024 * 1024)} MB)"


def _decoded(raw: bytes) -> str:
    """Bytes as text: UTF-16 when they open with its byte-order mark, else UTF-8.

    `nvidia-smi -q > file` in Windows PowerShell 5 writes UTF-16 LE with a byte-order mark;
    neither mark (FF FE, FE FF) can open UTF-8 text. A UTF-8 mark is removed with the text's
    other clutter (values.clean_text).
    """
    if raw[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            pass  # an odd number of bytes or a lone surrogate: refused below as not UTF-8
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError("binary data: the input is not UTF-8 text") from None


def decode(data: bytes | bytearray | memoryview) -> str:
    """The text of an output read as bytes (an uploaded file, a pipe): UTF-8, or UTF-16 with a
    byte-order mark, as parse_output reads bytes. ParseError for input over MAX_INPUT_BYTES or
    bytes that are neither; the text is otherwise as decoded (parse_output checks the rest)."""
    raw = bytes(data)
    if len(raw) > MAX_INPUT_BYTES:
        raise ParseError(too_large(len(raw)))
    return _decoded(raw)


def _text(data: bytes | str) -> str:
    """Checked text: within the size limit, UTF-8 (or UTF-16 with a byte-order mark), not
    binary."""
    if isinstance(data, bytes | bytearray | memoryview):
        text = decode(data)
    elif isinstance(data, str):
        if len(data) > MAX_INPUT_BYTES:
            raise ParseError(too_large(len(data.encode("utf-8", "replace"))))
        try:
            size = len(data.encode("utf-8"))
        except UnicodeEncodeError:
            raise ParseError("binary data: the input is not valid Unicode text") from None
        if size > MAX_INPUT_BYTES:
            raise ParseError(too_large(size))
        text = data
    else:
        raise ParseError(f"input must be text or bytes, not {type(data).__name__}")
    if "\x00" in text:
        raise ParseError("binary data: the input holds NUL bytes")
    if not text.strip():
        raise ParseError("empty input")
    return clean_text(text)


def detect(data: str) -> str:
    """The kind of output `data` is: one of KINDS. ParseError when it is none of them."""
    return _detect(_text(data))


def parse_output(
    data: bytes | str, *, kind: str | None = None, host: str | None = None
) -> NodeFacts:
    """The facts in one output, its kind detected unless given.

    Bytes must be UTF-8 text, or UTF-16 with a byte-order mark; input over MAX_INPUT_BYTES
    is refused. `host` names the node
    when the output does not (it overrides what the output says).
    """
    text = _text(data)
    if kind is not None and kind not in KINDS:
        raise ParseError(f"unknown input kind {kind!r}; expected one of {', '.join(KINDS)}")
    kind = kind or _detect(text)
    if kind == "bundle":
        try:
            bundle = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ParseError(f"not valid bundle JSON: {str(exc)[:200]}") from None
        node = parse_bundle(bundle)
    else:
        node = parse_kind(kind, text)
    if host is not None:
        node["host"] = host
    return node


def parse_outputs(outputs: list[tuple[str, str]], *, host: str | None = None) -> NodeFacts:
    """Merged facts from several outputs of ONE node, as (name or command, text) pairs.

    The kind of each comes from its command when the name is one ("nvidia-smi -q -x"), else
    from its text. Outputs that cannot be read become warnings; ParseError only when none
    could be read at all.
    """
    if not isinstance(outputs, list | tuple):
        raise ParseError("outputs must be a list of (name, text) pairs")
    pairs: list[tuple[str, str]] = []
    refused: list[str] = []
    for position, pair in enumerate(outputs):
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise ParseError(f"outputs[{position}] must be a (name, text) pair")
        name, data = pair
        if not isinstance(name, str):
            raise ParseError(f"outputs[{position}] name must be a string")
        if isinstance(data, str) and not data.strip():
            pairs.append((name, ""))  # warned about as empty output below
            continue
        try:
            pairs.append((name, _text(data)))
        except ParseError as exc:
            refused.append(f"{' '.join(name.split())[:200] or 'output'}: {exc}")
    documents, warnings = parse_sections(pairs)
    warnings = refused + warnings
    if not documents:
        reasons = "; ".join(warnings[:3]) or "no outputs"
        raise ParseError(f"nothing could be read: {reasons}"[:500])
    node = _merge_nodes(documents)
    node["warnings"] = list(dict.fromkeys(node["warnings"] + warnings))
    if host is not None:
        node["host"] = host
    return node


def parse_sections(outputs: Iterable[tuple[str, str]]) -> tuple[list[NodeFacts], list[str]]:
    """Parse (name or command, text) pairs: the documents read, and a warning per failure.

    The kind comes from the command when it names one, else from the text.
    """
    documents: list[NodeFacts] = []
    warnings: list[str] = []
    for name, raw in outputs:
        label = " ".join(name.split())[:200] or "output"
        text = v.clean_text(raw)
        if not text.strip():
            warnings.append(f"{label}: empty output")
            continue
        try:
            found = command_kind(name)
            kind, fields = found if found is not None else (_detect(text), None)
            document = parse_kind(kind, text, fields=fields)
        except ParseError as exc:
            warnings.append(f"{label}: {exc}")
            continue
        if kind != "capture":
            document["sources"] = [label]
        documents.append(document)
    return documents, warnings


def parse_bundle(bundle: object) -> NodeFacts:
    """Facts from the push agent's bundle (a decoded JSON object; format in docs/probes.md).

    The bundle is checked first (ParseError naming the bad field), then its outputs are
    parsed as by parse_outputs and its benchmarks, host and expected GPU count added. Outputs
    that failed or could not be read become warnings; ParseError when none could be read (its
    message gives the first reasons: a command's exit status and error, a refused XML bomb).
    """
    checked = read_bundle(bundle)
    pairs: list[tuple[str, str]] = []
    refused: list[str] = []
    for name, data in checked.outputs:
        try:
            pairs.append((name, _text(data)))
        except ParseError as exc:
            refused.append(f"{' '.join(name.split())[:200]}: {exc}")
    documents, warnings = parse_sections(pairs)
    warnings = checked.warnings + refused + warnings
    if not documents:
        reasons = "; ".join(warnings[:3]) or "the bundle holds no outputs"
        raise ParseError(f"nothing could be read: {reasons}"[:500])
    node = _merge_nodes(documents)
    node["warnings"] = list(dict.fromkeys(warnings + node["warnings"]))
    node["benchmarks"] = checked.benchmarks
    node["expected_gpu_count"] = checked.expected_gpus
    if checked.host is not None:
        node["host"] = checked.host
    return node


def merge_nodes(docs: Sequence[NodeFacts]) -> NodeFacts:
    """One document from several read from the same node.

    GPUs are matched by UUID, else PCI bus id, else index; a known value wins over None and a
    later document wins over an earlier one for conflicting known values. Sources, warnings,
    Xid events, DCGM results and benchmarks are concatenated without duplicates.
    """
    return _merge_nodes(docs)
