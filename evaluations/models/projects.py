"""Evaluation projects and their framing, team membership, single sign-on
identities, and the project history."""

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from evaluations.models.choices import (
    ExistingBase,
    LayerNeeded,
    MembershipSource,
    Phase,
    SsoProvider,
    SupplierNeed,
    TeamRole,
    Workload,
)

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
    # A shortlist is not a permanent conclusion: when to review the decision again, and what
    # else reopens it (one condition a line, checked by people; reports.review checks the
    # ones the workbench can see itself).
    review_by = models.DateField(_("review the decision by"), null=True, blank=True)
    reopen_when = models.TextField(_("also reopened when"), blank=True, db_default="")
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


class ProjectEvent(models.Model):
    """An entry in a project's history: who changed what, when, with the values before/after.

    Entries form a keyed hash chain per project (evaluations.audit): each holds its position
    `seq`, the hash of the entry before it and its own HMAC over its content under the key
    `key_id` names (blank: written before the chain was keyed, a plain SHA-256), so that an
    entry edited or deleted in the database is found by `manage.py verify_audit`. `actor_name`
    keeps who it was as written then (the user may be deleted later; the chain must still
    verify)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    actor_name = models.CharField(max_length=200, blank=True)
    at = models.DateTimeField(default=timezone.now, db_index=True)
    verb = models.CharField(max_length=60)
    subject = models.CharField(max_length=255, blank=True)
    # What the subject names, as kinds and keys (evaluations.history_labels): named in the
    # reader's language when read. Empty on entries written before it, which read `subject`.
    subject_parts = models.JSONField(default=list, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    seq = models.PositiveBigIntegerField(null=True, blank=True)
    prev_hash = models.CharField(max_length=64, blank=True)
    hash = models.CharField(max_length=64, blank=True)
    key_id = models.CharField(max_length=16, blank=True)

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
