import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from poc.probes import parsers
from poc.probes.management.reading import read_text
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
        binary = _("%(name)s: binary data, not GPU tool output (UTF-8 or UTF-16 text)") % {
            "name": name
        }
        return read_text(name, binary=binary)
