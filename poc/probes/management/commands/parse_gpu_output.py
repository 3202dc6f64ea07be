import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from poc.probes import parsers
from poc.probes.rules import health


class Command(BaseCommand):
    help = (
        "Read GPU tool output of one node (nvidia-smi -q -x, -q, --query-gpu CSV, -L, nvlink, "
        "a capture of several commands, dcgmi diag -j, a kernel log, or an agent bundle; several "
        "files are merged) and print its normalized facts and health as JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE", help="'-' reads standard input")
        parser.add_argument("--host", default="", help="the node's name, if the output lacks it")
        parser.add_argument("--expected-gpus", type=int, default=None)
        parser.add_argument("--facts-only", action="store_true", help="leave out the health")

    def handle(self, *args: Any, **options: Any) -> None:
        outputs = []
        for name in options["files"]:
            outputs.append((name, self._read(name)))
        try:
            if len(outputs) == 1:
                facts = parsers.parse_output(outputs[0][1], host=options["host"] or None)
            else:
                facts = parsers.parse_outputs(outputs, host=options["host"] or None)
        except parsers.ParseError as exc:
            raise CommandError(f"{', '.join(options['files'])}: {exc}") from None
        if options["host"]:
            facts["host"] = options["host"]
        if options["expected_gpus"] is not None:
            facts["expected_gpu_count"] = options["expected_gpus"]
        document: dict[str, Any] = {"facts": facts}
        if not options["facts_only"]:
            document["health"] = health.judge_node(facts)
        self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False))

    def _read(self, name: str) -> str:
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
            return parsers.decode(data)  # UTF-8, or UTF-16 with a byte-order mark
        except parsers.ParseError as exc:
            if len(data) > parsers.MAX_INPUT_BYTES:
                raise CommandError(f"{name}: {exc}") from None
            raise CommandError(
                _("%(name)s: binary data, not GPU tool output (UTF-8 or UTF-16 text)")
                % {"name": name}
            ) from None


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
