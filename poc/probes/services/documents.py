"""Offline evidence of a cluster the workbench cannot reach: the documents its admins upload
(`kubectl get ... -o yaml`, `kubectl describe pod`, `scontrol show nodes`, `sinfo`, slurmrestd's
JSON) read by the live connectors' functions (poc.probes.connectors.offline), and stored as a
probe run of the candidate, optionally of one of its clusters, the way a live cluster run is:
the cluster's facts in `cluster_facts`, one node per GPU node with its health, the documents
as raw outputs, and the results of the bound actions. All or nothing: a document that cannot be
read stores nothing."""

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluations.history_labels import candidate_part, phrase_part, text_part
from evaluations.models import ApiToken, Candidate, Project
from evaluations.services import event_record
from poc.probes import parsers, present
from poc.probes.connectors import offline
from poc.probes.facts import FACTS_FORMAT, NodeFacts
from poc.probes.models import (
    Cluster,
    ClusterKind,
    ProbeOutput,
    ProbeRun,
    ProbeSource,
    ProbeStatus,
)
from poc.probes.recording import run_record
from poc.probes.rules import health
from poc.probes.services.probes import (
    NodeInput,
    ProbeInputError,
    ProbeRecorded,
    store,
    store_nodes,
    worst,
)
from workbench.people import stored_user
from workbench.storage import StoredFile, files_removed_on_failure
from workbench.text import first_unstorable

MAX_CITED = 12  # documents a result cites; the run's page lists them all
# The kinds of cluster each facts document may be attached to.
CLUSTER_KINDS = {
    "workbench-k8s-facts/1": (ClusterKind.KUBERNETES,),
    "workbench-slurm-facts/1": (ClusterKind.SLURM_REST, ClusterKind.SLURM_SSH),
}


def read_cluster_documents(documents: Sequence[tuple[str, bytes | str]]) -> dict[str, Any]:
    """The facts the documents tell, checked as storable; ProbeInputError naming the document
    that cannot be read."""
    try:
        facts = offline.read_documents(documents)
    except offline.DocumentError as exc:
        raise ProbeInputError(str(exc)) from None
    if problem := first_unstorable(facts, "documents"):
        raise ProbeInputError(problem)
    return facts


def _check_owner(project: Project, candidate: Candidate, cluster: Cluster | None) -> None:
    if candidate.project_id != project.pk:
        raise ProbeInputError(_("The candidate belongs to another project."))
    if cluster is not None and (
        cluster.project_id != project.pk or cluster.candidate_id != candidate.pk
    ):
        raise ProbeInputError(
            _("Cluster %(name)s is not one of this candidate's clusters.") % {"name": cluster.name}
        )


def _check_kind(cluster: Cluster | None, facts_format: str) -> None:
    if cluster is not None and cluster.kind not in CLUSTER_KINDS.get(facts_format, ()):
        platform = "Kubernetes" if facts_format.startswith("workbench-k8s") else "Slurm"
        raise ProbeInputError(
            _(
                "Cluster %(name)s is registered as %(kind)s: documents of a %(platform)s "
                "cluster cannot be attached to it."
            )
            % {"name": cluster.name, "kind": cluster.get_kind_display(), "platform": platform}
        )


def _store_documents(
    run: ProbeRun, raw: list[dict[str, Any]], created: list[str]
) -> list[StoredFile]:
    """The documents as given, kept as raw outputs of the run; the first ones to cite."""
    rows, cited = [], []
    for offset, document in enumerate(raw):
        name, text = str(document.get("name") or "document")[:500], str(document.get("text") or "")
        stored = store(run.project, text, created)
        rows.append(
            ProbeOutput(
                run=run,
                name=name,
                exit_code=None,
                file=stored[0],
                sha256=stored[1],
                size=stored[2],
                position=offset,
            )
        )
        head = text.lstrip()[:1]
        cited.append(
            StoredFile(
                name=present.output_filename(name),
                file=stored[0],
                sha256=stored[1],
                size=stored[2],
                content_type="application/json" if head in ("{", "[") else "text/plain",
            )
        )
    ProbeOutput.objects.bulk_create(rows)
    return cited[:MAX_CITED]


def cluster_documents_record(
    *,
    project: Project,
    candidate: Candidate,
    documents: Sequence[tuple[str, bytes | str]],
    actor: User | None,
    cluster: Cluster | None = None,
    token: ApiToken | None = None,
) -> ProbeRecorded:
    """Read `documents` ((name, content) each) and store them as a probe run of `candidate`
    (and of `cluster`, one of its clusters of the same platform), with the results of every
    bound action, judged by the checks a live cluster run is judged by. All or nothing."""
    _check_owner(project, candidate, cluster)
    facts = read_cluster_documents(documents)
    _check_kind(cluster, str(facts["format"]))
    raw: list[dict[str, Any]] = facts.pop("raw")
    nodes: list[NodeFacts] = facts.pop("gpu_nodes")
    for node in nodes:
        if cluster is not None and cluster.expected_gpus_per_node:
            node["expected_gpu_count"] = cluster.expected_gpus_per_node
    judged = [(NodeInput(node, []), health.judge_node(node)) for node in nodes]
    actor = stored_user(actor)
    with files_removed_on_failure() as created, transaction.atomic():
        run = ProbeRun.objects.create(
            project=project,
            candidate=candidate,
            cluster=cluster,
            source=ProbeSource.DOCUMENTS,
            status=ProbeStatus.DONE,
            verdict=worst([h["verdict"] for _n, h in judged]) if judged else "",
            node_count=len(judged),
            gpu_count=sum(len(node["gpus"]) for node in nodes),
            parser_version=parsers.PARSER_VERSION,
            facts_format=FACTS_FORMAT,
            cluster_facts=facts,
            with_failures="controlled_failures" in facts,
            created_by=actor,
            token=token,
            finished_at=timezone.now(),
        )
        store_nodes(run, judged, created, several=True)
        cited = _store_documents(run, raw, created)
        recorded = run_record(run, nodes, cited, actor=actor, token=token, cluster_facts=facts)
        event_record(
            project=project,
            actor=actor,
            verb="probe.recorded",
            parts=[
                text_part(cluster.name) if cluster else candidate_part(candidate),
                phrase_part("probe.run", n=run.pk),
            ],
            after={
                "source": ProbeSource.DOCUMENTS.value,
                "documents": len(raw),
                "verdict": run.verdict,
                "nodes": run.node_count,
                "gpus": run.gpu_count,
                "results": recorded.stored if recorded else 0,
                **({"token": token.name} if token else {}),
            },
        )
    return ProbeRecorded(run, recorded)
