"""Frozen procurement sheets, the sign-off decisions on them, and their signed PDFs."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from evaluations.models import Project, TeamRole


class SheetStatus(models.TextChoices):
    PENDING = "pending", _("Waiting for a worker")
    RENDERING = "rendering", _("Rendering")
    READY = "ready", _("Ready for sign-off")
    SEALING = "sealing", _("Approved: sealing")
    SEALED = "sealed", _("Signed and sealed")
    FAILED = "failed", _("Failed")
    WITHDRAWN = "withdrawn", _("Withdrawn")


# Revisions that can still be taken out of sign-off (an approved one, being sealed, cannot).
WITHDRAWABLE_STATUSES = (
    SheetStatus.PENDING,
    SheetStatus.RENDERING,
    SheetStatus.READY,
    SheetStatus.FAILED,
)
# Revisions that are still under way: they can be signed (or will be, once rendered).
OPEN_STATUSES = (
    SheetStatus.PENDING,
    SheetStatus.RENDERING,
    SheetStatus.READY,
    SheetStatus.SEALING,
    SheetStatus.FAILED,
)


class Layout(models.TextChoices):
    """What the PDF's body prints; the snapshot and the attachments are the same for both."""

    DECISION = "decision", _("Decision document")
    FULL = "full", _("Every result printed")


class Sheet(models.Model):
    """A revision of a project's procurement sheet: a frozen snapshot (canonical JSON with its
    sha256) and the PDF rendered from it. A sheet is never edited; a changed project gets a
    new revision."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="sheets")
    revision = models.PositiveIntegerField()
    language = models.CharField(max_length=10, choices=[("en", "English"), ("zh-hans", "简体中文")])
    candidate_slugs = models.JSONField(default=list, blank=True)
    layout = models.CharField(max_length=10, choices=Layout, default=Layout.DECISION)
    snapshot = models.JSONField()
    snapshot_json = models.TextField()  # the canonical bytes the hash covers
    sha256 = models.CharField(max_length=64)
    # The same snapshot's sha256 in the source language, so that translation updates do not
    # make a revision look outdated (snapshot.content_fingerprint); empty on older revisions.
    fingerprint = models.CharField(max_length=64, blank=True)
    required_roles = models.JSONField(default=list)
    status = models.CharField(max_length=20, choices=SheetStatus, default=SheetStatus.PENDING)
    progress = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)  # why rendering failed
    seal_error = models.TextField(blank=True)  # why the last attempt to seal failed
    # When rendering or sealing was last queued, and when a worker took it up (None while it
    # waits): selectors.sheet_work_is_stuck tells work lost with its message or its worker. The
    # taking-up time is also the claim a worker must still hold to write its result.
    queued_at = models.DateTimeField(null=True, blank=True)
    work_started_at = models.DateTimeField(null=True, blank=True)
    pdf = models.FileField(upload_to="sheets/drafts/", blank=True)
    sealed_pdf = models.FileField(upload_to="sheets/sealed/", blank=True)
    sealed_sha256 = models.CharField(max_length=64, blank=True)
    # The project history's head when it was sealed, printed on the signed sign-off page: an
    # anchor outside the database that `verify_audit` holds the chain to.
    audit_seq = models.PositiveBigIntegerField(null=True, blank=True)
    audit_hash = models.CharField(max_length=64, blank=True)
    page_count = models.PositiveIntegerField(default=0)
    generated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    # A revision a CI pipeline generated: the token, whose creator counts as its generator.
    generated_by_token = models.ForeignKey(
        "evaluations.ApiToken", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The project's separation-of-duties choice, frozen with the revision.
    one_signer_many_roles = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    rendered_at = models.DateTimeField(null=True, blank=True)
    sealed_at = models.DateTimeField(null=True, blank=True)
    withdrawn_reason = models.TextField(blank=True)
    # Times the beat task queued lost work again (it gives up after a few: a person decides).
    recoveries = models.PositiveSmallIntegerField(default=0)
    # The worker queue could not take the render or seal: the work waits in this row and the
    # beat sends it once the broker answers (`reports.services.sheets_resend`).
    unsent = models.BooleanField(default=False)
    # What the review still lacked when this revision was frozen (reports.decision.readiness,
    # in its language), and who acknowledged that with what reason: a person generating it does
    # so at once; a revision a CI token generated waits for a member before anyone approves.
    gaps = models.JSONField(default=list, blank=True)
    gaps_reason = models.TextField(blank=True)
    gaps_acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    gaps_acknowledged_at = models.DateTimeField(null=True, blank=True)
    # When the notice that this sealed decision is due for review was written (once).
    review_noticed_at = models.DateTimeField(null=True, blank=True)
    # When the notice that this open revision has become outdated was written (once).
    outdated_noticed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-revision"]
        constraints = [
            models.UniqueConstraint(fields=["project", "revision"], name="sheet_unique_revision")
        ]

    def __str__(self) -> str:
        return f"{self.project.slug} r{self.revision}"

    @property
    def gaps_open(self) -> bool:
        """Generated before the review was ready, and nobody has acknowledged it yet."""
        return bool(self.gaps) and self.gaps_acknowledged_at is None


class Decision(models.TextChoices):
    APPROVE = "approve", _("Approve")
    REJECT = "reject", _("Reject")


class SignOff(models.Model):
    """One role's decision on one revision (by its hash). Rejections are kept and shown."""

    sheet = models.ForeignKey(Sheet, on_delete=models.PROTECT, related_name="signoffs")
    role = models.CharField(max_length=20, choices=TeamRole)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decision = models.CharField(max_length=10, choices=Decision)
    comment = models.TextField(blank=True)
    sheet_sha256 = models.CharField(max_length=64)
    # Decided on the frozen revision while the project had already moved on (the signer was
    # shown what changed since the freeze).
    after_changes = models.BooleanField(default=False)
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["decided_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["sheet", "role"], name="signoff_one_per_role")
        ]

    def __str__(self) -> str:
        return f"{self.sheet} {self.role}: {self.decision}"


class NoticeKind(models.TextChoices):
    AWAITING = "awaiting", _("Awaiting your decision")
    REJECTED = "rejected", _("Rejected")
    SEALED = "sealed", _("Signed and sealed")
    OUTDATED = "outdated", _("Outdated")
    REVIEW = "review", _("Due for review")


class Notice(models.Model):
    """One e-mail to one person about one revision, written in the transaction of the event
    (an outbox: a broker or mail server that is down delays it, never loses it)."""

    MAX_ATTEMPTS = 5  # tries before a notice is given up on (reports.services.notices)

    sheet = models.ForeignKey(Sheet, on_delete=models.CASCADE, related_name="notices")
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    kind = models.CharField(max_length=20, choices=NoticeKind)
    role = models.CharField(max_length=20, choices=TeamRole, blank=True)  # awaiting: which
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["sheet", "recipient", "kind", "role"], name="notice_once"
            )
        ]
        indexes = [models.Index(fields=["sent_at", "attempts"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.sheet} to {self.recipient}"
