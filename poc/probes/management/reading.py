"""What the parse commands read: a file, a pipe or standard input, up to the parsers' size limit,
decoded as the parsers decode (UTF-8, or UTF-16 with a byte-order mark)."""

import sys
from pathlib import Path
from typing import BinaryIO

from django.core.management.base import CommandError

from poc.probes import parsers


def read_text(name: str, *, binary: str) -> str:
    """The text of `name` ('-': standard input). CommandError naming the file when it cannot be
    read, is over the limit (with its size), or is not text (`binary`, the message then)."""
    try:
        if name == "-":
            data = _read_stream(name, sys.stdin.buffer)
        else:
            path = Path(name)
            if path.is_file():
                if path.stat().st_size > parsers.MAX_INPUT_BYTES:
                    raise CommandError(f"{name}: {parsers.too_large(path.stat().st_size)}")
                data = path.read_bytes()
            else:
                # /dev/stdin, a named pipe, bash's <(command): no size to check beforehand.
                with path.open("rb") as stream:
                    data = _read_stream(name, stream)
    except OSError as exc:
        raise CommandError(f"{name}: {exc.strerror or exc}") from None
    try:
        return parsers.decode(data)
    except parsers.ParseError as exc:
        if len(data) > parsers.MAX_INPUT_BYTES:
            raise CommandError(f"{name}: {exc}") from None
        raise CommandError(binary) from None


def _read_stream(name: str, stream: BinaryIO) -> bytes:
    """A stream's bytes up to the size limit; CommandError naming its size when over it (the
    rest is counted to its end, not kept)."""
    data = _read_up_to(stream, parsers.MAX_INPUT_BYTES + 1)
    if len(data) > parsers.MAX_INPUT_BYTES:
        size = len(data)
        while chunk := stream.read(1 << 20):
            size += len(chunk)
        raise CommandError(f"{name}: {parsers.too_large(size)}")
    return data


def _read_up_to(stream: BinaryIO, limit: int) -> bytes:
    """Up to `limit` bytes: a raw or non-blocking stream may return fewer per read."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = stream.read(min(limit - size, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
