"""Rows that belong to no domain: the worker check that proves background jobs run."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class WorkerCheck(models.Model):
    """One round trip through the queue: created by the web side, completed by a worker."""

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    worker_hostname = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["-requested_at"]
        verbose_name = _("worker check")

    def __str__(self) -> str:
        return f"worker check {self.pk}"

    @property
    def round_trip_ms(self) -> int | None:
        if self.completed_at is None:
            return None
        return int((self.completed_at - self.requested_at).total_seconds() * 1000)


class UserPreference(models.Model):
    """What a person wants from the workbench beyond its pages: e-mail, and in which language."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    email_notifications = models.BooleanField(
        _("e-mail me when a sheet awaits my decision, is rejected, sealed or outdated"),
        default=True,
    )
    # Empty: the site's language (LANGUAGE_CODE).
    language = models.CharField(
        _("language of e-mails"), max_length=10, blank=True, choices=settings.LANGUAGES
    )

    class Meta:
        verbose_name = _("user preference")

    def __str__(self) -> str:
        return f"preferences of {self.user}"
