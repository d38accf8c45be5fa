"""The audit entry: the spec's fields, indexed for newest-first pages with filters."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class AuditEntry(models.Model):
    timestamp = models.DateTimeField(default=timezone.now)
    action = models.CharField(max_length=64)
    resource = models.CharField(max_length=255)
    # A snapshot string ("api-key", "cli:alice"), not a foreign key: rows outlive identities.
    user = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001 - null is "nobody" (insecure mode), kept apart from any name
    details = models.JSONField(default=dict, blank=True)
    success = models.BooleanField()

    class Meta:
        ordering = ("-timestamp", "-id")
        verbose_name = "audit entry"
        verbose_name_plural = "audit entries"
        # Each index matches one listing exactly (filter, then newest first) so a page is an
        # index range scan whatever the table size.
        indexes = (
            models.Index(fields=["-timestamp", "-id"], name="audit_newest"),
            models.Index(fields=["action", "-timestamp", "-id"], name="audit_action_newest"),
            models.Index(fields=["resource", "-timestamp", "-id"], name="audit_resource_newest"),
            models.Index(
                fields=["action", "resource", "-timestamp", "-id"], name="audit_act_res_newest"
            ),
        )

    def __str__(self) -> str:
        outcome = "ok" if self.success else "failed"
        return f"{self.timestamp:%Y-%m-%d %H:%M:%S} {self.action} {self.resource} {outcome}"
