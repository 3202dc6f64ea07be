"""Terms for the demo project, so a first look shows what procurement records (development only).
Licences are as the projects publish them; every other figure is an illustration, recorded as
"our estimate" and said to be one."""

from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from evaluations.models import Candidate, Project
from reports.procurement.models import (
    Basis,
    CompatibilityClaim,
    Confirmation,
    CostLine,
    CostModel,
    TermEntry,
)
from reports.procurement.services import (
    LineData,
    ModelData,
    Stack,
    TermChange,
    compatibility_claim,
    confirmation_set,
    cost_line_add,
    cost_model_save,
    terms_record,
)

ILLUSTRATIVE = "Illustrative demo figure, not a quote."
PUBLISHED = "the project's LICENSE file"
VENDOR_PAGE = "the vendor's published product terms"

DEMO_TERMS: dict[str, list[TermChange]] = {
    "k8s-gpu-operator": [
        TermChange("licence_kind", "mixed", Basis.LIST_PRICE, source=PUBLISHED),
        TermChange(
            "licence_spdx",
            "Apache-2.0 AND LicenseRef-NVIDIA-Software-License",
            Basis.LIST_PRICE,
            source=PUBLISHED,
        ),
        TermChange("pricing_unit", "per_gpu", Basis.ESTIMATE),
        TermChange("list_price", {"amount": "4500", "currency": "USD"}, Basis.ESTIMATE),
        TermChange("support_hours", "24x7", Basis.ESTIMATE),
        TermChange("utilisation_percent", "55", Basis.ESTIMATE),
    ],
    "volcano": [
        TermChange("licence_kind", "open_source", Basis.LIST_PRICE, source=PUBLISHED),
        TermChange("licence_spdx", "Apache-2.0", Basis.LIST_PRICE, source=PUBLISHED),
        TermChange(
            "support_layers",
            {"scheduler": "community", "gpu_stack": "vendor", "platform": "our_team"},
            Basis.ESTIMATE,
        ),
        TermChange("upgrade_cadence_months", "3", Basis.ESTIMATE),
        TermChange("utilisation_percent", "70", Basis.ESTIMATE),
        TermChange("support_hours", "business_hours", Basis.ESTIMATE),
        TermChange("exit_effort_days", "10", Basis.ESTIMATE),
    ],
    "slurm": [
        TermChange("licence_kind", "open_source", Basis.LIST_PRICE, source=PUBLISHED),
        TermChange("licence_spdx", "GPL-2.0-or-later", Basis.LIST_PRICE, source=PUBLISHED),
        TermChange(
            "licence_notes",
            "Distributed with an OpenSSL linking exception; support is sold separately.",
        ),
        TermChange("upgrade_cadence_months", "9", Basis.ESTIMATE),
        TermChange("utilisation_percent", "75", Basis.ESTIMATE),
        TermChange("support_hours", "24x7", Basis.ESTIMATE),
    ],
    "runai": [
        TermChange("utilisation_percent", "80", Basis.ESTIMATE),
        TermChange("licence_kind", "commercial", Basis.LIST_PRICE, source=VENDOR_PAGE),
        TermChange("pricing_unit", "per_gpu", Basis.ESTIMATE),
        TermChange("price_term", "subscription_3y", Basis.ESTIMATE),
        TermChange("list_price", {"amount": "3000", "currency": "USD"}, Basis.ESTIMATE),
        TermChange("support_hours", "24x7", Basis.ESTIMATE),
        TermChange("sev1_response_hours", "4", Basis.ESTIMATE),
        TermChange("upgrade_cadence_months", "3", Basis.ESTIMATE),
        TermChange("exit_notice_days", "90", Basis.ESTIMATE),
        TermChange(
            "exit_formats",
            "Projects and quotas through the API as JSON; workloads are Kubernetes objects.",
        ),
        TermChange("sbom", "on_request", Basis.ESTIMATE),
    ],
    "openshift-ai": [
        TermChange("licence_kind", "commercial", Basis.LIST_PRICE, source=VENDOR_PAGE),
        TermChange("pricing_unit", "per_core_pair", Basis.ESTIMATE),
        TermChange(
            "licence_notes",
            "Needs OpenShift underneath: the subscription replaces the Kubernetes we run.",
        ),
    ],
}


@transaction.atomic
def demo_terms(project: Project) -> int:
    """Record the demo terms a candidate has no entry for yet (a term someone recorded is left
    as it is); how many."""
    actor = User.objects.filter(username="procurement").first()
    held = set(TermEntry.objects.filter(project=project).values_list("candidate__slug", "key"))
    recorded = 0
    for candidate in Candidate.objects.filter(project=project, slug__in=list(DEMO_TERMS)):
        changes = [c for c in DEMO_TERMS[candidate.slug] if (candidate.slug, c.key) not in held]
        if changes:
            recorded += len(
                terms_record(candidate=candidate, changes=changes, actor=actor, reason=ILLUSTRATIVE)
            )
    gpu_operator = Candidate.objects.filter(project=project, slug="k8s-gpu-operator").first()
    claimed = CompatibilityClaim.objects.filter(combination__candidate=gpu_operator)
    if gpu_operator is not None and not claimed.exists():
        compatibility_claim(
            candidate=gpu_operator,
            stack=Stack("NVIDIA H100 80GB HBM3", "550.90.07", "12.4", platform="Kubernetes 1.30"),
            status="vendor",
            reference="Published platform support matrix (illustrative demo entry)",
            actor=actor,
        )
    if gpu_operator is not None and not Confirmation.objects.filter(project=project).exists():
        confirmation_set(
            candidate=gpu_operator,
            subject="term:sev1_response_hours",
            actor=actor,
            owner_team="procurement",
            owner=actor,
            due=timezone.localdate() + timedelta(days=14),
            request="Asked the vendor for the severity-1 response time of its support annex.",
        )
    return recorded


DEMO_MODEL = ModelData(
    currency="USD",
    horizon_years=5,
    discount_rate_percent="5",
    gpus=64,
    nodes=8,
    cores_per_node=64,
    sockets_per_node=2,
    named_users=40,
    gpu_hours_per_year=336384,  # 64 GPUs busy 60 % of the year
    growth_percent=15,
    fte_cost=150000,
    day_rates={"platform": 800, "ops": 700, "architecture": 900},
    capacity="owned",
    gpu_price=32000,  # a data-centre GPU's share of its server, illustrative
    depreciation_years=4,
    baseline_label="Today: hand-run clusters, no shared scheduler",
    baseline_utilisation_percent=35,
)


def _line(
    category: str, kind: str, label: str, low: int, expected: int, high: int, **extra: object
) -> LineData:
    return LineData(
        category,
        kind,
        label,
        low,
        expected,
        high,
        basis=Basis.ESTIMATE,
        **extra,  # type: ignore[arg-type]
    )


DEMO_LINES: dict[str, list[LineData]] = {
    "k8s-gpu-operator": [
        _line("licence", "per_unit", "GPU software subscription", 4000, 4500, 5000,
              unit="per_gpu", currency="USD", discount_percent=15),
        _line("operations", "fte", "Platform operations", 1, 1, 2),
        _line("training", "one_off", "Operator training", 10000, 20000, 30000, currency="USD"),
    ],
    "volcano": [
        _line("support", "per_year", "Third-party support contract", 40000, 60000, 90000,
              currency="USD"),
        _line("operations", "fte", "Scheduler operations", 1, 2, 3),
        _line("training", "one_off", "Queue and quota training", 5000, 15000, 25000,
              currency="USD"),
    ],
    "slurm": [
        _line("support", "per_year", "Vendor support by quote", 30000, 50000, 80000,
              currency="USD"),
        _line("operations", "fte", "Batch cluster operations", 2, 2, 3),
    ],
    "runai": [
        _line("licence", "per_unit", "Platform subscription", 2000, 3000, 5000,
              unit="per_gpu", currency="USD"),
        _line("operations", "fte", "Platform operations", 1, 1, 2),
    ],
}  # fmt: skip
BASELINE_LINES = [
    _line("operations", "fte", "Hand-run cluster operations", 2, 3, 4),
    _line("other", "per_year", "Idle capacity bought for peaks", 20000, 40000, 80000,
          currency="USD"),
]  # fmt: skip


@transaction.atomic
def demo_costs(project: Project) -> int:
    """The demo cost model, and the illustrative lines of each candidate (and of the baseline)
    that has none yet; how many lines were added. A model someone saved is left as it is."""
    actor = User.objects.filter(username="procurement").first()
    if not CostModel.objects.filter(project=project).exists():
        cost_model_save(project=project, data=DEMO_MODEL, actor=actor)
    owners = set(CostLine.objects.filter(project=project).values_list("candidate__slug", flat=True))
    added = 0
    for candidate in Candidate.objects.filter(project=project, slug__in=list(DEMO_LINES)):
        if candidate.slug in owners:
            continue
        for data in DEMO_LINES[candidate.slug]:
            cost_line_add(candidate=candidate, data=data, actor=actor)
            added += 1
    if None not in owners:
        for data in BASELINE_LINES:
            cost_line_add(candidate=None, project=project, data=data, actor=actor)
            added += 1
    return added
