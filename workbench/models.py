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
