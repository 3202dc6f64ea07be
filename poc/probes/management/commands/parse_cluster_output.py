import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from poc.probes.connectors import offline
from poc.probes.management.reading import read_text
from poc.probes.rules import health


class Command(BaseCommand):
    help = (
        "Read documents of one cluster (Kubernetes objects as YAML or JSON from kubectl get, "
        "kubectl describe pod, scontrol show nodes, sinfo, slurmrestd's or sinfo --json's "
        "JSON; several files are read together) and print the cluster's facts, and each GPU "
        "node's facts and health, as JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE", help="'-' reads standard input")
        parser.add_argument(
            "--expected-gpus", type=int, default=None, help="the GPUs each node should have"
        )
        parser.add_argument("--facts-only", action="store_true", help="leave out the health")

    def handle(self, *args: Any, **options: Any) -> None:
        documents = [(name, self._read(name)) for name in options["files"]]
        try:
            facts = offline.read_documents(documents)
        except offline.DocumentError as exc:
            raise CommandError(str(exc)) from None
        facts.pop("raw")
        nodes = []
        for node in facts.pop("gpu_nodes"):
            if options["expected_gpus"] is not None:
                node["expected_gpu_count"] = options["expected_gpus"]
            shown: dict[str, Any] = {"facts": node}
            if not options["facts_only"]:
                shown["health"] = health.judge_node(node)
            nodes.append(shown)
        document = {"cluster": facts, "nodes": nodes}
        self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False))

    def _read(self, name: str) -> str:
        binary = _("%(name)s: binary data, not cluster documents (UTF-8 or UTF-16 text)") % {
            "name": name
        }
        return read_text(name, binary=binary)
