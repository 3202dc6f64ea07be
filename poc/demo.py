"""PoC results for the demo project, so a first look shows a living matrix (development only)."""

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction

from evaluations.models import AcceptanceAction, Candidate, Project
from poc import services
from poc.models import (
    Outcome,
    Party,
    Responsibility,
    ResponsibilityArea,
    ResultCell,
)

# (candidate slug, action key, outcome, extra fields)
DEMO_RESULTS: tuple[tuple[str, str, str, dict[str, object]], ...] = (
    ("k8s-gpu-operator", "gpu-inventory-discovery", Outcome.PASSED, {}),
    ("k8s-gpu-operator", "gpu-real-training-job", Outcome.PASSED, {}),
    (
        "k8s-gpu-operator",
        "tenancy-quota-reached",
        Outcome.NEEDS_INTEGRATION,
        {
            "integration_what": "GPU quotas per team need a queue layer on top of ResourceQuota.",
            "integration_owner_team": "platform",
            "integration_effort_days": Decimal("8"),
        },
    ),
    ("volcano", "gpu-inventory-discovery", Outcome.PASSED, {}),
    ("volcano", "gpu-real-training-job", Outcome.PASSED, {}),
    (
        "volcano",
        "tenancy-quota-reached",
        Outcome.PASSED,
        {
            "note": "Queue capability refused the 9th GPU with a clear *Unschedulable* reason.",
        },
    ),
    ("slurm", "gpu-inventory-discovery", Outcome.PASSED, {}),
    (
        "slurm",
        "gpu-real-training-job",
        Outcome.FAILED,
        {
            "failure_cause": "The training image needs a container runtime the batch nodes lack.",
        },
    ),
)


@transaction.atomic
def demo_results(project: Project) -> int:
    """Record the demo outcomes once; cells that already have a result are left alone."""
    actor = User.objects.filter(username="platform").first()
    candidates = {c.slug: c for c in Candidate.objects.filter(project=project)}
    actions = {a.key: a for a in AcceptanceAction.objects.filter(project=project)}
    done = set(
        ResultCell.objects.filter(project=project).values_list("candidate__slug", "action__key")
    )
    recorded = 0
    for candidate_slug, key, outcome, extra in DEMO_RESULTS:
        if (candidate_slug, key) in done or candidate_slug not in candidates or key not in actions:
            continue
        services.result_record(
            candidate=candidates[candidate_slug],
            action=actions[key],
            outcome=outcome,
            actor=actor,
            **extra,  # type: ignore[arg-type]
        )
        recorded += 1
    volcano = candidates.get("volcano")
    if volcano is not None and not Responsibility.objects.filter(candidate=volcano).exists():
        services.responsibility_set(
            candidate=volcano,
            area=ResponsibilityArea.DEPLOYMENT,
            party=Party.PLATFORM_TEAM,
            person="platform",
            escalation="Head of platform",
            actor=actor,
        )
        services.responsibility_set(
            candidate=volcano,
            area=ResponsibilityArea.DRIVERS,
            party=Party.OPS_TEAM,
            person="ops",
            actor=actor,
        )
    return recorded
