"""Evaluation projects: framing, team membership, the solution catalog and the shortlist."""

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from workbench.languages import is_chinese


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
DEFAULT_SIGNING_ROLES = ["platform", "architecture", "procurement", "business", "ops"]


def default_signing_roles() -> list[str]:
    return list(DEFAULT_SIGNING_ROLES)


def _check_choice_list(value: Any, choices: type[models.TextChoices], field: str) -> None:
    if not isinstance(value, list):
        raise ValidationError({field: _("Must be a list.")})
    unknown = [item for item in value if item not in choices.values]
    if unknown:
        raise ValidationError(
            {field: _("Unknown values: %(values)s.") % {"values": ", ".join(map(str, unknown))}}
        )
    if len(set(value)) != len(value):
        raise ValidationError({field: _("A value is listed twice.")})


RESERVED_PROJECT_SLUGS = frozenset({"new"})


class Project(models.Model):
    """One evaluation: the organisation's framing of its need and everything proven against it."""

    name = models.CharField(_("name"), max_length=200)
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    description = models.TextField(_("description"), blank=True)
    phase = models.CharField(_("phase"), max_length=20, choices=Phase, default=Phase.FRAMING)
    # The history position the phase was last judged at: a project whose history has not
    # moved since is not judged again.
    phase_seen_seq = models.PositiveBigIntegerField(default=0, editable=False)
    workloads = models.JSONField(_("dominant workloads"), default=list, blank=True)
    existing_base = models.CharField(
        _("existing base"), max_length=20, choices=ExistingBase, blank=True
    )
    layer_needed = models.CharField(
        _("layer needed"), max_length=30, choices=LayerNeeded, blank=True
    )
    supplier_needs = models.JSONField(_("supplier needs"), default=list, blank=True)
    signing_roles = models.JSONField(_("roles that sign its sheets"), default=default_signing_roles)
    # Separation of duties: by default one person decides for at most one role of a revision,
    # whatever roles they hold. A project may allow otherwise; its sheets then say so.
    one_signer_many_roles = models.BooleanField(
        _("one person may sign for several roles"), default=False
    )
    # The team's recommendation, frozen with each revision of the sheet.
    recommended = models.JSONField(_("recommended candidates"), default=list, blank=True)
    recommendation_conditions = models.TextField(_("conditions"), blank=True)
    recommendation_reason = models.TextField(_("reason for the recommendation"), blank=True)
    # "Freeze for sign-off": while on and a revision is open, edits to what that revision froze
    # are refused (results are still recorded, after the freeze). The open revision and when it
    # was frozen are kept here by the sheet services, so that every app can check them.
    review_freeze = models.BooleanField(_("frozen for sign-off"), default=False)
    frozen_revision = models.PositiveIntegerField(null=True, blank=True)
    frozen_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("project")
        verbose_name_plural = _("projects")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.slug in RESERVED_PROJECT_SLUGS:
            raise ValidationError({"slug": _("This short name is reserved; choose another.")})
        _check_choice_list(self.workloads, Workload, "workloads")
        _check_choice_list(self.supplier_needs, SupplierNeed, "supplier_needs")
        _check_choice_list(self.signing_roles, TeamRole, "signing_roles")
        if TeamRole.OBSERVER in self.signing_roles:
            raise ValidationError({"signing_roles": _("Observers do not sign sheets.")})
        if not self.signing_roles:
            raise ValidationError(
                {"signing_roles": _("At least one team role must sign the sheets.")}
            )

    def get_workloads_display(self) -> list[str]:
        labels = dict(Workload.choices)
        return [str(labels[w]) for w in self.workloads if w in labels]

    def get_supplier_needs_display(self) -> list[str]:
        labels = dict(SupplierNeed.choices)
        return [str(labels[n]) for n in self.supplier_needs if n in labels]

    @property
    def framing_complete(self) -> bool:
        return bool(self.workloads and self.existing_base and self.layer_needed)


class MembershipSource(models.TextChoices):
    MANUAL = "manual", _("Given by a project admin")
    SSO = "sso", _("Given by single sign-on")


class Membership(models.Model):
    """A person's team role in one project; a person may hold several roles, one row each.

    `source` says who keeps the row: a project admin (manual), or single sign-on, which grants
    it from the person's groups at each login and takes it away when no group gives it any
    more. Single sign-on never touches a manual row."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(_("team role"), max_length=20, choices=TeamRole)
    is_admin = models.BooleanField(_("project admin"), default=False)
    source = models.CharField(
        _("given by"), max_length=10, choices=MembershipSource, default=MembershipSource.MANUAL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "user__username", "role"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user", "role"], name="membership_unique_role"
            )
        ]
        verbose_name = _("membership")

    def __str__(self) -> str:
        return f"{self.user} · {self.get_role_display()} · {self.project}"


class SsoProvider(models.TextChoices):
    LDAP = "ldap", _("LDAP directory")
    OIDC = "oidc", _("OpenID Connect")


class SsoIdentity(models.Model):
    """Who an account is at an identity provider: an OIDC issuer's subject (`sub`), or an LDAP
    user name. An OIDC login finds its account through this row only, never by e-mail address
    or user name, so a provider's user cannot take over a local account of the same name."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities"
    )
    provider = models.CharField(_("provider"), max_length=10, choices=SsoProvider)
    issuer = models.CharField(_("issuer"), max_length=500, blank=True)
    subject = models.CharField(_("subject"), max_length=255)
    groups = models.JSONField(_("groups at the last login"), default=list, blank=True)
    last_login_at = models.DateTimeField(_("last login"), default=timezone.now)

    class Meta:
        ordering = ["provider", "subject"]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "issuer", "subject"], name="sso_identity_unique_subject"
            )
        ]
        verbose_name = _("single sign-on identity")
        verbose_name_plural = _("single sign-on identities")

    def __str__(self) -> str:
        return f"{self.provider}:{self.subject} → {self.user}"


# --- API tokens ---------------------------------------------------------------------------


class TokenScope(models.TextChoices):
    READ = "read", _("Read the project")
    RESULTS_WRITE = "results:write", _("Post PoC results")
    PROBES_WRITE = "probes:write", _("Post GPU probe output")


class ApiToken(models.Model):
    """A project-scoped bearer token for CI and scripts. Only a hash is kept; the token is
    shown once."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(_("name"), max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    token_hash = models.CharField(max_length=64)
    scopes = models.JSONField(default=list)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("API token")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def clean(self) -> None:
        unknown = [s for s in self.scopes if s not in TokenScope.values]
        if unknown or not self.scopes:
            raise ValidationError(
                {"scopes": _("Choose one or more of: read, results:write, probes:write.")}
            )


class LocalizedTextMixin:
    """Catalog rows keep each text in English (`*_en`) and Simplified Chinese (`*_zh`)."""

    def localized(self, field: str) -> str:
        value = getattr(self, f"{field}_{language_suffix()}")
        return value or getattr(self, f"{field}_en")


def language_suffix() -> str:
    """`zh` when the active language is Chinese, else `en`: the suffix of catalog text fields."""
    return "zh" if is_chinese(get_language()) else "en"


class LibraryTextMixin:
    """Rows copied from the template library keep the library's wording in both languages.

    `translations` maps a text field to {"en": ..., "zh": ...} while the field still holds the
    library's wording; the reader then sees their own language. Editing a field drops its
    entry, so text a team wrote stays exactly as written, in every language.
    """

    translations: dict[str, dict[str, str]]

    def shown(self, field: str) -> str:
        stored: str = getattr(self, field)
        texts = (self.translations or {}).get(field)
        if not texts or stored not in texts.values():
            return stored
        return texts.get(language_suffix()) or stored

    def is_library_text(self, field: str, value: str) -> bool:
        """Whether `value` is the library's wording of `field` in one of the languages."""
        texts = (self.translations or {}).get(field) or {}
        return bool(texts) and value in texts.values()


class SolutionKind(models.TextChoices):
    ROUTE = "route", _("Route")
    PRODUCT = "product", _("Product")


class Solution(LocalizedTextMixin, models.Model):
    """A catalog entry: a software route or a concrete product, described for shortlisting."""

    key = models.SlugField(max_length=60, unique=True)
    kind = models.CharField(max_length=10, choices=SolutionKind)
    route = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="products",
        limit_choices_to={"kind": SolutionKind.ROUTE},
    )
    vendor = models.CharField(max_length=120, blank=True)
    position = models.PositiveIntegerField(default=0)
    name_en = models.CharField(max_length=120)
    name_zh = models.CharField(max_length=120)
    summary_en = models.TextField(blank=True)
    summary_zh = models.TextField(blank=True)
    scale_en = models.TextField(_("applicable scale (en)"), blank=True)
    scale_zh = models.TextField(_("applicable scale (zh)"), blank=True)
    integration_cost_en = models.TextField(blank=True)
    integration_cost_zh = models.TextField(blank=True)
    operations_owner_en = models.TextField(blank=True)
    operations_owner_zh = models.TextField(blank=True)
    not_suitable_when_en = models.TextField(blank=True)
    not_suitable_when_zh = models.TextField(blank=True)
    must_test_en = models.TextField(blank=True, help_text=_("One item per line."))
    must_test_zh = models.TextField(blank=True, help_text=_("One item per line."))
    # Entries a team added (their own control plane, a product the shipped catalog lacks) carry
    # who added them and keys starting TEAM_KEY_PREFIX; the shipped ones come from catalog/
    # through seed_catalog, which never touches a team's entry.
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    added_at = models.DateTimeField(null=True, blank=True)

    TEAM_KEY_PREFIX = "team-"

    class Meta:
        ordering = ["kind", "position", "key"]
        verbose_name = _("solution")
        verbose_name_plural = _("solution catalog")

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return self.localized("name")

    @property
    def is_team_entry(self) -> bool:
        return self.key.startswith(self.TEAM_KEY_PREFIX)

    def must_test_items(self) -> list[str]:
        return [line.strip() for line in self.localized("must_test").splitlines() if line.strip()]


class Tier(models.TextChoices):
    FIRST = "validate_first", _("Validate first")
    ALTERNATIVE = "alternative", _("Validate as alternative")
    NOT_APPLICABLE = "not_applicable", _("Not applicable for now")


class FilterStep(models.TextChoices):
    INFRASTRUCTURE = "infrastructure", _("Infrastructure fit")
    WORKLOAD = "workload", _("Workload fit")
    RESPONSIBILITY_COST = "responsibility_cost", _("Responsibility and cost")


class Candidate(models.Model):
    """A solution on a project's shortlist, in one tier, with the reason that put it there."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="candidates")
    solution = models.ForeignKey(Solution, on_delete=models.PROTECT, related_name="candidacies")
    slug = models.SlugField(_("slug"), max_length=60)
    version = models.CharField(_("version under test"), max_length=80, blank=True)
    tier = models.CharField(_("tier"), max_length=20, choices=Tier, default=Tier.FIRST)
    decided_by_step = models.CharField(
        _("decided at step"), max_length=30, choices=FilterStep, default=FilterStep.INFRASTRUCTURE
    )
    reason = models.TextField(_("reason"), blank=True)
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="candidate_unique_slug"),
            models.CheckConstraint(
                condition=~Q(tier="not_applicable") | ~Q(reason=""),
                name="candidate_not_applicable_needs_reason",
                violation_error_message=_(
                    "A candidate that is not applicable for now needs a reason."
                ),
            ),
        ]
        verbose_name = _("candidate")

    def __str__(self) -> str:
        label = self.solution.name
        return f"{label} {self.version}".strip()

    def clean(self) -> None:
        if self.tier == Tier.NOT_APPLICABLE and not self.reason.strip():
            raise ValidationError(
                {"reason": _("A candidate that is not applicable for now needs a reason.")}
            )


class ProjectEvent(models.Model):
    """An entry in a project's history: who changed what, when, with the values before/after.

    Entries form a hash chain per project (evaluations.audit): each holds its position `seq`,
    the hash of the entry before it and its own hash over its content, so that an entry edited
    or deleted in the database is found by `manage.py verify_audit`. `actor_name` keeps who it
    was as written then (the user may be deleted later; the chain must still verify)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    actor_name = models.CharField(max_length=200, blank=True)
    at = models.DateTimeField(default=timezone.now, db_index=True)
    verb = models.CharField(max_length=60)
    subject = models.CharField(max_length=255, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    seq = models.PositiveBigIntegerField(null=True, blank=True)
    prev_hash = models.CharField(max_length=64, blank=True)
    hash = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-at", "-pk"]
        verbose_name = _("project event")
        constraints = [
            models.UniqueConstraint(fields=["project", "seq"], name="project_event_seq_unique")
        ]

    def __str__(self) -> str:
        return f"{self.project}: {self.verb} {self.subject}"


class AuditHead(models.Model):
    """The newest entry of a project's history chain: its position and hash. Appending locks
    this row, so entries get consecutive positions; `verify_audit` compares the chain's end with
    it, so deleting the newest entries is found too."""

    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="audit_head"
    )
    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, blank=True)

    class Meta:
        verbose_name = _("audit chain head")

    def __str__(self) -> str:
        return f"{self.project_id}: {self.seq}"


# --- acceptance suite --------------------------------------------------------------------


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


class Requirement(LibraryTextMixin, models.Model):
    """A feature as teams or vendors name it; proven only through its acceptance actions."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="requirements")
    feature = models.CharField(_("feature as named"), max_length=300)
    dimension = models.CharField(_("dimension"), max_length=20, choices=Dimension)
    owner_team = models.CharField(_("owning team"), max_length=20, choices=OWNER_TEAMS)
    importance = models.CharField(
        _("importance"), max_length=10, choices=Importance, default=Importance.MUST
    )
    source = models.CharField(max_length=20, choices=RequirementSource, default="manual")
    template_key = models.SlugField(max_length=80, blank=True)
    translations = models.JSONField(default=dict, blank=True)  # see LibraryTextMixin
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "template_key"],
                condition=~Q(template_key=""),
                name="requirement_unique_template_key",
            )
        ]
        verbose_name = _("requirement")

    def __str__(self) -> str:
        return self.feature

    @property
    def feature_text(self) -> str:
        return self.shown("feature")


class AcceptanceAction(LibraryTextMixin, models.Model):
    """A business question and the action that answers it; every candidate runs it identically.

    `key` is how CI pipelines and probes address the action: unique in the project and stable.
    Results point at the row, not the key, so a rename keeps their history (see ActionKeyRename).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="actions")
    requirement = models.ForeignKey(Requirement, on_delete=models.CASCADE, related_name="actions")
    key = models.SlugField(_("key"), max_length=80)
    question = models.TextField(_("business question"))
    steps = models.TextField(_("steps"), blank=True)
    expected_evidence = models.TextField(_("expected evidence"), blank=True)
    pass_criterion = models.TextField(_("pass criterion"))
    scenario = models.CharField(_("scenario"), max_length=30, choices=Scenario)
    template_key = models.SlugField(max_length=80, blank=True)
    translations = models.JSONField(default=dict, blank=True)  # see LibraryTextMixin
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["project", "key"], name="action_unique_key"),
            models.UniqueConstraint(
                fields=["project", "template_key"],
                condition=~Q(template_key=""),
                name="action_unique_template_key",
            ),
        ]
        verbose_name = _("acceptance action")

    def __str__(self) -> str:
        return self.key

    @property
    def question_text(self) -> str:
        return self.shown("question")

    @property
    def steps_text(self) -> str:
        return self.shown("steps")

    @property
    def expected_evidence_text(self) -> str:
        return self.shown("expected_evidence")

    @property
    def pass_criterion_text(self) -> str:
        return self.shown("pass_criterion")

    def clean(self) -> None:
        same_project = self.requirement.project_id == self.project_id
        if self.requirement_id and self.project_id and not same_project:
            raise ValidationError({"requirement": _("The requirement belongs to another project.")})


class ActionKeyRename(models.Model):
    """A past key of an action, so that old CI jobs and links still find it."""

    action = models.ForeignKey(AcceptanceAction, on_delete=models.CASCADE, related_name="renames")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    old_key = models.SlugField(max_length=80)
    new_key = models.SlugField(max_length=80)
    renamed_at = models.DateTimeField(auto_now_add=True)
    renamed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )

    class Meta:
        ordering = ["-renamed_at", "-pk"]
        indexes = [models.Index(fields=["project", "old_key"])]

    def __str__(self) -> str:
        return f"{self.old_key} -> {self.new_key}"


# --- template library (catalog) ----------------------------------------------------------


class TemplateSetKind(models.TextChoices):
    WORKED_REWRITE = "worked-rewrite", _("Worked rewrite of a feature claim")
    ROUTE_MUST_TEST = "route-must-test", _("Must-test items of a route")
    CONTROLLED_FAILURE = "controlled-failure", _("Controlled failures")
    INTEGRATION = "integration", _("Integration checklist")
    GPU_EVIDENCE = "gpu-evidence", _("GPU node evidence read by probes")


class TemplateSet(LocalizedTextMixin, models.Model):
    """A named group of template requirements and actions that can be applied to a project."""

    key = models.SlugField(max_length=80, unique=True)
    kind = models.CharField(max_length=30, choices=TemplateSetKind)
    route = models.ForeignKey(
        Solution, on_delete=models.PROTECT, null=True, blank=True, related_name="template_sets"
    )
    name_en = models.CharField(max_length=200)
    name_zh = models.CharField(max_length=200)
    description_en = models.TextField(blank=True)
    description_zh = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "key"]
        verbose_name = _("template set")

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return self.localized("name")


class TemplateRequirement(LocalizedTextMixin, models.Model):
    template_set = models.ForeignKey(
        TemplateSet, on_delete=models.CASCADE, related_name="requirements"
    )
    key = models.SlugField(max_length=80, unique=True)
    feature_en = models.CharField(max_length=300)
    feature_zh = models.CharField(max_length=300)
    dimension = models.CharField(max_length=20, choices=Dimension)
    owner_team = models.CharField(max_length=20, choices=OWNER_TEAMS)
    importance = models.CharField(max_length=10, choices=Importance)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "key"]

    def __str__(self) -> str:
        return self.key


class TemplateAction(LocalizedTextMixin, models.Model):
    requirement = models.ForeignKey(
        TemplateRequirement, on_delete=models.CASCADE, related_name="actions"
    )
    key = models.SlugField(max_length=80, unique=True)
    scenario = models.CharField(max_length=30, choices=Scenario)
    question_en = models.TextField()
    question_zh = models.TextField()
    steps_en = models.TextField(blank=True)
    steps_zh = models.TextField(blank=True)
    evidence_en = models.TextField(blank=True)
    evidence_zh = models.TextField(blank=True)
    pass_criterion_en = models.TextField()
    pass_criterion_zh = models.TextField()
    # The probe check that judges this action by default: {"check": KEY, "params": {...}} with
    # a key of the PoC app's check catalogue, or {} for an action checked by people.
    probe_check = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "key"]

    def __str__(self) -> str:
        return self.key
