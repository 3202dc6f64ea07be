"""What the demo project's teams did after the first revision was signed (development only):
the Slurm batch nodes got Apptainer, so the training image and job ran there, and ops took on
Slurm's observability. Each is done once: a cell no longer as the demo left it, or an area
someone holds already, is left alone."""

from django.contrib.auth.models import User
from django.db import transaction

from evaluations.models import AcceptanceAction, Candidate, Project
from poc import services
from poc.demo.responsibilities import OPS
from poc.models import Outcome, Responsibility, ResponsibilityArea, ResultCell, Source

SLURM = "slurm"
# (action, note, why the outcome changes)
FIXED = (
    (
        "hpc-container-image-run",
        "Rerun after the install: the team's image ran unchanged as a batch job with GPU access.",
        "Apptainer 1.3 is now installed on the batch nodes.",
    ),
    (
        "gpu-real-training-job",
        "The 8-GPU fine-tuning job ran at 96 % of its bare-metal step time.",
        "The image runs now that the batch nodes have Apptainer.",
    ),
)


@transaction.atomic
def followups(project: Project, people: dict[str, User]) -> int:
    """Record the follow-ups that still apply; how many were recorded."""
    slurm = Candidate.objects.filter(project=project, slug=SLURM).first()
    if slurm is None:
        return 0
    ops = people.get("ops")
    actions = {a.key: a for a in AcceptanceAction.objects.filter(project=project)}
    cells = {
        cell.action_id: cell
        for cell in ResultCell.objects.filter(candidate=slurm).select_related("result")
    }
    recorded = 0
    for key, note, reason in FIXED:
        action = actions.get(key)
        cell = cells.get(action.pk) if action else None
        if action is None or cell is None:
            continue
        if cell.outcome != Outcome.FAILED or cell.result.source != Source.MANUAL:
            continue
        services.result_record(
            candidate=slurm,
            action=action,
            outcome=Outcome.PASSED,
            note=note,
            change_reason=reason,
            actor=ops,
        )
        recorded += 1
    area = ResponsibilityArea.OBSERVABILITY
    if not Responsibility.objects.filter(candidate=slurm, area=area).exists():
        services.responsibility_set(
            candidate=slurm,
            area=area,
            party=OPS.party,
            person=OPS.person,
            escalation=OPS.escalation,
            note="Taken on with the Slurm exporter work.",
            actor=ops,
        )
        recorded += 1
    return recorded
