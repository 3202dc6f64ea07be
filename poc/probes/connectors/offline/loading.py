"""Documents as text, and their JSON or YAML read as plain data: within the size limits of node
output, and safely (YAML's safe schema only, anchors and aliases bounded so that a small file
cannot expand into a large one)."""

import datetime
import json
import math
from typing import Any

import yaml

from poc.probes import parsers

# Reading the YAML costs this many nodes at most per character of input, plus a margin: plain
# YAML has fewer nodes than characters; only aliases, repeated, go past it.
NODE_MARGIN = 10_000
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR = "tag:yaml.org,2002:str"


class DocumentError(ValueError):
    """A document cannot be read; the message names it and says why, on one line."""

    def __init__(self, document: str, problem: str) -> None:
        super().__init__(f"{document}: {problem}" if document else problem)
        self.document = document
        self.problem = problem


def document_text(name: str, data: bytes | str) -> str:
    """A document's text: UTF-8, or UTF-16 with a byte-order mark, within MAX_INPUT_BYTES."""
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        if len(raw) > parsers.MAX_INPUT_BYTES:
            raise DocumentError(name, parsers.too_large(len(raw)))
        try:
            text = parsers.decode(raw)
        except parsers.ParseError:
            raise DocumentError(name, "binary data, not text (UTF-8 or UTF-16)") from None
    else:
        text = data
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise DocumentError(name, "the text is not valid Unicode") from None
        if size > parsers.MAX_INPUT_BYTES:
            raise DocumentError(name, parsers.too_large(size))
    if "\x00" in text:
        raise DocumentError(name, "binary data: the text holds NUL bytes")
    return text.removeprefix("\ufeff")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def load_json(name: str, text: str) -> list[Any]:
    """The JSON values of a text: one, or several one after another (what `jq '.items[]'`
    prints)."""
    decoder = json.JSONDecoder(parse_constant=_no_constant)
    values, position = [], 0
    try:
        while position < len(text):
            value, position = decoder.raw_decode(text, position)
            values.append(value)
            while position < len(text) and text[position].isspace():
                position += 1
    except RecursionError:
        raise DocumentError(name, "the JSON is nested too deeply") from None
    except ValueError as exc:
        raise DocumentError(name, f"not valid JSON: {exc}") from None
    return values


class _TooLarge(Exception):
    pass


def _scalar(value: Any) -> Any:
    """A YAML scalar as JSON can hold it: dates as ISO text, no NaN or infinity."""
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _plain(
    node: yaml.Node, budget: list[int], constructor: yaml.constructor.SafeConstructor
) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    if isinstance(node, yaml.MappingNode):
        data: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _plain(key_node, budget, constructor)
            data[str(key)] = _plain(value_node, budget, constructor)
        return data
    if isinstance(node, yaml.SequenceNode):
        return [_plain(item, budget, constructor) for item in node.value]
    if node.tag == _STR:  # most of what kubectl writes: no constructor needed
        return node.value
    return _scalar(constructor.construct_object(node))


def load_yaml(name: str, text: str) -> list[Any]:
    """The documents of a YAML stream (`---` between them), as plain data."""
    budget = [len(text) + NODE_MARGIN]
    constructor = yaml.constructor.SafeConstructor()
    documents = []
    try:
        for node in yaml.compose_all(text, Loader=_LOADER):
            documents.append(_plain(node, budget, constructor) if node is not None else None)
    except _TooLarge:
        raise DocumentError(name, "the YAML expands too far (anchors and aliases)") from None
    except RecursionError:
        raise DocumentError(name, "the YAML is nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DocumentError(name, f"not valid YAML: {problem}{where}") from None
    except (ValueError, TypeError, IndexError) as exc:  # a scalar its tag cannot build (!!int x)
        raise DocumentError(name, f"not valid YAML: {str(exc).splitlines()[0][:200]}") from None
    return documents
