"""Project API tokens and their scopes."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from evaluations.models.projects import Project


class TokenScope(models.TextChoices):
    READ = "read", _("Read the project")
    RESULTS_WRITE = "results:write", _("Post PoC results")
    PROBES_WRITE = "probes:write", _("Post GPU probe output")
    COSTS_WRITE = "costs:write", _("Write terms and costs")
    # Starting work on a registered cluster: not implied by probes:write (posting output).
    CLUSTERS_RUN = "clusters:run", _("Start probe runs on registered clusters")


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
                {
                    "scopes": _("Choose one or more of: %(scopes)s.")
                    % {"scopes": ", ".join(TokenScope.values)}
                }
            )


class IdempotencyRecord(models.Model):
    """The first response to a POST with an Idempotency-Key, replayed for retries."""

    scope = models.CharField(max_length=100)  # "token:<id>" or "user:<id>"
    key = models.CharField(max_length=200)
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(default=0)
    response = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "key"], name="idempotency_unique_key")
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created")]

    def __str__(self) -> str:
        return f"{self.scope} {self.key}"
