"""Terms for the demo project, so a first look shows what procurement records (development only).
Licences are as the projects publish them; every other figure is an illustration, recorded as
"our estimate" and said to be one."""

from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from evaluations.models import Candidate, Project
from reports.procurement.models import Basis, TermEntry
from reports.procurement.services import TermChange, confirmation_set, terms_record

ILLUSTRATIVE = "Illustrative demo figure, not a quote."
PUBLISHED = "the project's LICENSE file"

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
    ],
    "slurm": [
        TermChange("licence_kind", "open_source", Basis.LIST_PRICE, source=PUBLISHED),
        TermChange("licence_spdx", "GPL-2.0-or-later", Basis.LIST_PRICE, source=PUBLISHED),
        TermChange(
            "licence_notes",
            "Distributed with an OpenSSL linking exception; support is sold separately.",
        ),
        TermChange("upgrade_cadence_months", "9", Basis.ESTIMATE),
    ],
}


@transaction.atomic
def demo_terms(project: Project) -> int:
    """Record the demo terms once (a project that has terms is left alone); how many."""
    if TermEntry.objects.filter(project=project).exists():
        return 0
    actor = User.objects.filter(username="procurement").first()
    recorded = 0
    for candidate in Candidate.objects.filter(project=project, slug__in=list(DEMO_TERMS)):
        recorded += len(
            terms_record(
                candidate=candidate,
                changes=DEMO_TERMS[candidate.slug],
                actor=actor,
                reason=ILLUSTRATIVE,
            )
        )
    gpu_operator = Candidate.objects.filter(project=project, slug="k8s-gpu-operator").first()
    if gpu_operator is not None:
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
