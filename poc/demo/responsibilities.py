"""Who carries each area of long-term responsibility for the demo project's candidates: most
of the grid assigned, a few areas deliberately left to nobody so the grid shows what is
missing. A cell that holds an assignment already is left alone."""

from dataclasses import dataclass

from django.contrib.auth.models import User

from evaluations.models import Candidate, Project
from poc.models import Delivery, Party, Responsibility
from poc.models import ResponsibilityArea as Area
from poc.services import responsibilities_assign

K, V, S, R = "k8s-gpu-operator", "volcano", "slurm", "runai"


@dataclass(frozen=True)
class Holder:
    party: str
    person: str
    escalation: str
    delivery: str = ""


PLATFORM = Holder(Party.PLATFORM_TEAM, "Wang Lei", "Head of platform")
OPS = Holder(Party.OPS_TEAM, "Zhang Min", "Ops duty manager")
NVIDIA = Holder(
    Party.VENDOR, "NVIDIA enterprise support", "NVIDIA support case, severity 1", Delivery.PRODUCT
)
SCHEDMD = Holder(Party.VENDOR, "SchedMD support", "SchedMD severity-1 line", Delivery.SERVICE)
RUNAI = Holder(
    Party.VENDOR, "Run:ai customer success manager", "Run:ai support, severity 1", Delivery.SERVICE
)
INTEGRATOR = Holder(
    Party.INTEGRATOR, "Integrator's Volcano desk", "Integrator account lead", Delivery.SERVICE
)

# Area -> candidate -> who holds it; a candidate left out of an area is a deliberate gap
# (Kubernetes with the GPU Operator: training; Volcano: backup; Slurm: observability, until
# ops takes it on; Run:ai: exit and backup).
GRID: dict[str, dict[str, Holder]] = {
    Area.DEPLOYMENT: {K: PLATFORM, V: PLATFORM, S: OPS, R: RUNAI},
    Area.UPGRADE: {K: PLATFORM, V: PLATFORM, S: OPS, R: PLATFORM},
    Area.DRIVERS: {K: NVIDIA, V: OPS, S: OPS, R: PLATFORM},
    Area.INCIDENTS: {K: OPS, V: OPS, S: OPS, R: OPS},
    Area.TRAINING: {V: PLATFORM, S: OPS, R: RUNAI},
    Area.SUPPORT: {K: NVIDIA, V: INTEGRATOR, S: SCHEDMD, R: RUNAI},
    Area.EXIT: {K: PLATFORM, V: PLATFORM, S: OPS},
    Area.BACKUP: {K: OPS, S: OPS},
    Area.CAPACITY: {K: PLATFORM, V: PLATFORM, S: OPS, R: PLATFORM},
    Area.OBSERVABILITY: {K: OPS, V: OPS, R: OPS},
    Area.IDENTITY: {K: PLATFORM, V: PLATFORM, S: OPS, R: PLATFORM},
}  # fmt: skip


def responsibilities(project: Project, actor: User | None) -> int:
    """Assign the grid's cells that hold nobody yet, a bulk assignment per holder; how many."""
    candidates = {c.slug: c for c in Candidate.objects.filter(project=project)}
    held = set(
        Responsibility.objects.filter(project=project).values_list("candidate__slug", "area")
    )
    by_holder: dict[Holder, list[tuple[Candidate, str]]] = {}
    for area, row in GRID.items():
        for slug, holder in row.items():
            if slug in candidates and (slug, area) not in held:
                by_holder.setdefault(holder, []).append((candidates[slug], area))
    assigned = 0
    for holder, cells in by_holder.items():
        done = responsibilities_assign(
            project=project,
            cells=cells,
            party=holder.party,
            person=holder.person,
            escalation=holder.escalation,
            delivery=holder.delivery,
            actor=actor,
        )
        assigned += len(done.changed)
    return assigned
