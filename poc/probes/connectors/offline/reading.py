"""Documents in, one cluster's facts document out, read by the live connectors' functions."""

from collections.abc import Callable, Sequence
from typing import Any

from poc.probes import parsers
from poc.probes.connectors.kubernetes.documents import facts_from_objects
from poc.probes.connectors.offline.loading import DocumentError, document_text
from poc.probes.connectors.offline.recognise import Piece, pieces_of
from poc.probes.connectors.slurm.cli import SCONTROL_NODES_COMMAND, SINFO_COMMAND
from poc.probes.connectors.slurm.documents import facts_from_documents

MAX_DOCUMENTS = 100


def read_documents(documents: Sequence[tuple[str, bytes | str]]) -> dict[str, Any]:
    """The facts document of the cluster the documents ((name, content) each) tell about: the
    one `probe_kubernetes` or the Slurm connectors return, with `raw` (the documents as given),
    `documents` (what each piece was read as) and, where a document shows a refusal,
    `controlled_failures`. DocumentError, naming the document, when one cannot be read."""
    if not documents:
        raise DocumentError("", "no document was given")
    if len(documents) > MAX_DOCUMENTS:
        raise DocumentError("", f"{len(documents)} documents, more than {MAX_DOCUMENTS} at once")
    texts = [(name, document_text(name, data)) for name, data in documents]
    total = sum(len(text.encode("utf-8")) for _name, text in texts)
    if total > parsers.MAX_INPUT_BYTES:
        raise DocumentError("", "the documents together are " + parsers.too_large(total))
    pieces = [
        piece for name, text in texts for piece in _shape_checked(name, pieces_of, name, text)
    ]
    platforms = {piece.platform for piece in pieces}
    if len(platforms) > 1:
        raise DocumentError(
            "",
            "documents of a Kubernetes cluster and of a Slurm cluster were given together: "
            "give each cluster's documents on their own",
        )
    names = ", ".join(dict.fromkeys(p.source for p in pieces))
    read = _kubernetes if platforms == {"kubernetes"} else _slurm
    facts = _shape_checked(names, read, pieces)
    scenarios = [s for p in pieces for s in p.scenarios]
    if scenarios or "controlled_failures" in facts:
        failures = facts.setdefault("controlled_failures", {"scenarios": [], "notes": []})
        failures["scenarios"] = sorted(
            [*failures["scenarios"], *scenarios], key=lambda s: not s.get("clean")
        )
    facts["raw"] = [{"name": name, "status": None, "text": text} for name, text in texts]
    facts["documents"] = [{"name": p.source, "kind": p.kind} for p in pieces]
    return facts


def _shape_checked[T](names: str, read: Callable[..., T], *args: Any) -> T:
    """What `read` makes of documents, where a value that is not of the type kubectl or Slurm
    writes there (a list for a mapping, text for a number) is the documents' fault, said as such
    rather than raised as a failure of the reader."""
    try:
        return read(*args)
    except DocumentError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        problem = (
            f"a value is not shaped as kubectl or Slurm writes it ({type(exc).__name__}: {exc})"
        )
        raise DocumentError(names, problem[:300]) from None


def _kubernetes(pieces: list[Piece]) -> dict[str, Any]:
    objects = [o for p in pieces for o in p.objects]
    pods = [e for p in pieces for e in p.pods]
    if not objects and not pods and not any(p.scenarios for p in pieces):
        names = ", ".join(dict.fromkeys(p.document for p in pieces))
        raise DocumentError(names, "the documents hold no Kubernetes object (empty Lists)")
    return facts_from_objects(objects, pods)


def _slurm(pieces: list[Piece]) -> dict[str, Any]:
    outputs: dict[str, str] = {}
    for piece in pieces:
        if piece.command:
            joined = [outputs[piece.command]] if piece.command in outputs else []
            outputs[piece.command] = "\n".join([*joined, piece.text])
    answers = [(p.document, p.what, p.data) for p in pieces if p.what]
    json_nodes = [p.document for p in pieces if p.what in ("nodes", "sinfo")]
    text_nodes = [
        p.document for p in pieces if p.command in (SCONTROL_NODES_COMMAND, SINFO_COMMAND)
    ]
    if json_nodes and text_nodes:
        raise DocumentError(
            ", ".join(dict.fromkeys([*text_nodes, *json_nodes])),
            "the nodes are given both as command output and as JSON: give one of them",
        )
    summary = "\n".join(p.summary for p in pieces if p.summary)
    return facts_from_documents(outputs, answers, summary)
