"""The demo project for a first look (development only)."""

from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.utils.translation import gettext as _

from evaluations.demo import DEMO_ADMIN, DEMO_PASSWORD, DEMO_SLUG
from evaluations.models import (
    Candidate,
    FilterStep,
    Project,
    Solution,
    TeamRole,
    TemplateSet,
    Tier,
)
from evaluations.services.projects import membership_set
from evaluations.services.shortlist import candidate_add
from evaluations.services.suite_library import template_set_apply

DEMO_TEMPLATE_SETS = (
    "multi-tenancy",
    "gpu-support",
    "controlled-failures",
    "integration-checklist",
    "route-container-native",
    "route-hpc-batch",
    "gpu-node-evidence",
    "cluster-probe-evidence",
)
DEMO_CANDIDATES = (
    ("k8s-gpu-operator", Tier.FIRST, FilterStep.INFRASTRUCTURE, "1.33 + GPU Operator v25.3"),
    ("volcano", Tier.FIRST, FilterStep.WORKLOAD, "1.12"),
    ("slurm", Tier.ALTERNATIVE, FilterStep.WORKLOAD, "24.05"),
    ("runai", Tier.ALTERNATIVE, FilterStep.RESPONSIBILITY_COST, "2.21"),
    ("openshift-ai", Tier.NOT_APPLICABLE, FilterStep.INFRASTRUCTURE, "2.19"),
)


@transaction.atomic
def demo_seed(*, fill: bool = True) -> tuple[Project, list[str]]:
    """The demo project with one user per team role; running it again changes nothing. With
    `fill` (the default), an existing demo project gets the memberships, candidates and
    template sets it lacks; without, only the demo accounts are made where they are missing,
    and the project is left as its people have made it."""
    user_model = get_user_model()
    project = Project.objects.filter(slug=DEMO_SLUG).first()
    if project is not None and not fill:
        return project, _accounts()
    if project is None:
        project = Project(
            slug=DEMO_SLUG,
            name=_("Demo: shared GPU pool for training and inference"),
            description=_(
                "A sample evaluation: a 64-GPU pool shared by three model teams, on an "
                "existing Kubernetes platform, with a small Slurm group for batch training."
            ),
            phase="poc",
            workloads=["training", "inference", "batch"],
            existing_base="both",
            layer_needed="queues-quotas",
            supplier_needs=["long-term-support", "multi-cluster"],
        )
        project.full_clean()
        project.save()
    usernames = []
    # The demo accounts share one published password: it is hashed once, not once per account
    # (each hash costs a third of a second, most of a first run's demo time).
    password = cache(lambda: make_password(DEMO_PASSWORD))
    for role in TeamRole.values:
        user = user_model.objects.filter(username=role).first()
        if user is None:
            user = user_model.objects.create(username=role, password=password())
        membership_set(
            project=project, user=user, role=role, is_admin=role == TeamRole.PLATFORM, actor=None
        )
        usernames.append(role)
    solutions = {s.key: s for s in Solution.objects.all()}
    existing = set(Candidate.objects.filter(project=project).values_list("slug", flat=True))
    for key, tier, step, version in DEMO_CANDIDATES:
        if key in existing or key not in solutions:
            continue
        reason = _demo_reason(key)
        candidate_add(
            project=project,
            solution=solutions[key],
            actor=None,
            tier=tier,
            version=version,
            decided_by_step=step,
            reason=reason,
            slug=key,
        )
    # A demo administrator for the admin site and the System page (development only: the demo
    # command refuses to run in production).
    admin = user_model.objects.filter(username=DEMO_ADMIN).first()
    if admin is None:
        user_model.objects.create(
            username=DEMO_ADMIN, password=password(), is_staff=True, is_superuser=True
        )
    usernames.append(DEMO_ADMIN)
    platform_user = user_model.objects.get(username=TeamRole.PLATFORM)
    for template_set in TemplateSet.objects.filter(key__in=DEMO_TEMPLATE_SETS):
        template_set_apply(project=project, template_set=template_set, actor=platform_user)
    return project, usernames


def _demo_reason(key: str) -> str:
    reasons = {
        "k8s-gpu-operator": _(
            "The base we already run; proves device discovery and driver lifecycle."
        ),
        "volcano": _("Adds queues, gang scheduling and fair share on the same Kubernetes."),
        "slurm": _("The batch-training group already knows it; kept to compare queue semantics."),
        "runai": _("Would buy tenancy and quotas ready-made; cost and exit terms to be checked."),
        "openshift-ai": _(
            "Not for now: it would replace the Kubernetes distribution we run, a bigger "
            "change than this evaluation covers."
        ),
    }
    return reasons.get(key, "")


def _accounts() -> list[str]:
    """The demo accounts' names, each made if it is missing (a missing one gets no role)."""
    user_model = get_user_model()
    names = [*TeamRole.values, DEMO_ADMIN]
    present = set(user_model.objects.filter(username__in=names).values_list("username", flat=True))
    if len(present) < len(names):
        password = make_password(DEMO_PASSWORD)
        for name in names:
            if name not in present:
                admin = name == DEMO_ADMIN
                user_model.objects.create(
                    username=name, password=password, is_staff=admin, is_superuser=admin
                )
    return names
