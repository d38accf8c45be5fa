"""Endpoints, the outbox of deliveries, and every attempt at one."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from webhooks.addresses import shown

EVENTS = ("rotation.completed", "rotation.failed", "sync.completed", "drift.detected", "job.failed")


class Endpoint(models.Model):
    url = models.CharField(max_length=2048)
    # Event names, a subset of EVENTS.
    events = models.JSONField(default=list)
    # The HMAC key: a credential, needed in clear to sign. Never shown after `webhook add`,
    # never in an audit row, a log line, the admin or an API answer.
    secret = models.CharField(max_length=255)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    # The projects whose events it is sent (names); empty: every project's.
    projects = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"webhook {self.pk} {self.shown_url}"

    def wants(self, project: str | None) -> bool:
        """Whether an event of ``project`` (None: of no project) is sent to it."""
        return not self.projects or project in self.projects

    @property
    def shown_url(self) -> str:
        """The URL with its query values and any credentials redacted (``addresses.shown``)."""
        return shown(self.url)


class Delivery(models.Model):
    """One event for one endpoint: written with the operation's audit row, sent afterwards."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"
    STATES = ((PENDING, PENDING), (DELIVERED, DELIVERED), (FAILED, FAILED))

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=32)
    # Names and counts only: never a value or a hash (webhooks.events builds it).
    payload = models.JSONField()
    state = models.CharField(max_length=16, choices=STATES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    last_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("-created_at", "-id")
        verbose_name_plural = "deliveries"
        indexes = (
            models.Index(fields=["state", "next_attempt_at"], name="webhook_due"),
            models.Index(fields=["endpoint", "-created_at", "-id"], name="webhook_endpoint_newest"),
        )

    def __str__(self) -> str:
        return f"{self.event} to webhook {self.endpoint_id} ({self.state})"


class Attempt(models.Model):
    """One try at a delivery: when, how long, and what the endpoint answered (or why none)."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_rows")
    at = models.DateTimeField()
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=255, blank=True, default="")
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ("at", "id")

    def __str__(self) -> str:
        return f"attempt at {self.at:%Y-%m-%d %H:%M:%S}: {self.status or self.error}"


class DriftSeen(models.Model):
    """The drift a secret showed at its last check (``webhooks.drift_seen``): a digest, never a value."""

    # A digest of the definition's path, environment and var files the check ran with.
    scope = models.CharField(max_length=64)
    secret = models.CharField(max_length=255)
    digest = models.CharField(max_length=64)
    seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = (models.UniqueConstraint(fields=["scope", "secret"], name="webhook_drift_seen_once"),)

    def __str__(self) -> str:
        return f"drift of {self.secret} seen {self.seen_at:%Y-%m-%d %H:%M:%S}"
