"""The fixed choices the models' fields take: framing, roles, tiers, dimensions,
scenarios, kinds."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Workload(models.TextChoices):
    TRAINING = "training", _("Training")
    INFERENCE = "inference", _("Inference")
    BATCH = "batch", _("Batch jobs")
    EXPERIMENT = "experiment", _("Experiments and evaluation")


class ExistingBase(models.TextChoices):
    KUBERNETES = "kubernetes", _("Kubernetes")
    SLURM_HPC = "slurm-hpc", _("Slurm / HPC")
    BOTH = "both", _("Both Kubernetes and Slurm")
    NONE = "none", _("Neither yet")


class LayerNeeded(models.TextChoices):
    DEVICE = "device-scheduling", _("Device scheduling")
    QUEUES = "queues-quotas", _("Job queues and quotas")
    GOVERNANCE = "tenancy-governance", _("Full tenancy, governance and operations")


class SupplierNeed(models.TextChoices):
    DELIVERY = "delivery", _("On-site delivery")
    LONG_TERM_SUPPORT = "long-term-support", _("Long-term support")
    DOMESTIC_HARDWARE = "domestic-hardware", _("Domestic accelerator hardware")
    MULTI_CLUSTER = "multi-cluster", _("Multi-cluster management")


class Phase(models.TextChoices):
    """Where an evaluation stands. It moves on its own with the project's state (the beat's
    `project_phases_refresh`); only archiving is a person's choice."""

    FRAMING = "framing", _("Framing")
    SHORTLISTING = "shortlisting", _("Shortlisting")
    POC = "poc", _("Proof of concept")
    REVIEW = "review", _("Sign-off")
    SIGNED = "signed", _("Decided")
    ARCHIVED = "archived", _("Archived")


class TeamRole(models.TextChoices):
    PLATFORM = "platform", _("Platform")
    OPS = "ops", _("Operations")
    PROCUREMENT = "procurement", _("Procurement")
    BUSINESS = "business", _("Business")
    ARCHITECTURE = "architecture", _("Architecture")
    OBSERVER = "observer", _("Observer")


# The team roles that may sign a procurement sheet (an observer never signs), and the default
# set each project's sheets need.
SIGNING_ROLE_CHOICES = [(r.value, r.label) for r in TeamRole if r != TeamRole.OBSERVER]


class MembershipSource(models.TextChoices):
    MANUAL = "manual", _("Given by a project admin")
    SSO = "sso", _("Given by single sign-on")


class SsoProvider(models.TextChoices):
    LDAP = "ldap", _("LDAP directory")
    OIDC = "oidc", _("OpenID Connect")


class SolutionKind(models.TextChoices):
    ROUTE = "route", _("Route")
    PRODUCT = "product", _("Product")


class Tier(models.TextChoices):
    FIRST = "validate_first", _("Validate first")
    ALTERNATIVE = "alternative", _("Validate as alternative")
    NOT_APPLICABLE = "not_applicable", _("Not applicable for now")


class FilterStep(models.TextChoices):
    INFRASTRUCTURE = "infrastructure", _("Infrastructure fit")
    WORKLOAD = "workload", _("Workload fit")
    RESPONSIBILITY_COST = "responsibility_cost", _("Responsibility and cost")


class Dimension(models.TextChoices):
    WORKLOAD_FIT = "workload_fit", _("Workload fit")
    SCHEDULING = "scheduling", _("Scheduling semantics")
    TENANCY = "tenancy", _("Tenancy and governance")
    OPERATIONS = "operations", _("Operations entry")
    TEAM = "team", _("Team prerequisites")
    INTEGRATION = "integration", _("Integration")
    COST_EXIT = "cost_exit", _("Cost and exit")


class Importance(models.TextChoices):
    MUST = "must", _("Must")
    SHOULD = "should", _("Should")
    COULD = "could", _("Could")


class Scenario(models.TextChoices):
    REAL_TASK = "real_task", _("Real task")
    RESOURCE_SHORTAGE = "resource_shortage", _("Resource shortage")
    NODE_FAILURE = "node_failure", _("Node failure and recovery")
    QUEUE_PREEMPTION = "queue_preemption", _("Queue conflict and preemption")
    PERMISSION_OVERREACH = "permission_overreach", _("Permission overreach")
    MONITORING_GAP = "monitoring_gap", _("Monitoring gap")
    UPGRADE_ROLLBACK = "upgrade_rollback", _("Upgrade and rollback")
    INTEGRATION_CHECK = "integration_check", _("Integration check")


# Every candidate still in play must face at least one action of each of these kinds.
REQUIRED_SCENARIOS = (
    Scenario.REAL_TASK,
    Scenario.RESOURCE_SHORTAGE,
    Scenario.PERMISSION_OVERREACH,
    Scenario.NODE_FAILURE,
)

OWNER_TEAMS = [(value, label) for value, label in TeamRole.choices if value != TeamRole.OBSERVER]


class RequirementSource(models.TextChoices):
    MANUAL = "manual", _("Written by the team")
    TEMPLATE = "template", _("From a template")
    VENDOR_CLAIM = "vendor_claim", _("Pasted vendor claim")
    IMPORT = "import", _("Imported")


class TemplateSetKind(models.TextChoices):
    WORKED_REWRITE = "worked-rewrite", _("Worked rewrite of a feature claim")
    ROUTE_MUST_TEST = "route-must-test", _("Must-test items of a route")
    CONTROLLED_FAILURE = "controlled-failure", _("Controlled failures")
    INTEGRATION = "integration", _("Integration checklist")
    GPU_EVIDENCE = "gpu-evidence", _("GPU node evidence read by probes")
