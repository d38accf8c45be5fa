"""The audit entry: the spec's fields, indexed for newest-first pages with filters."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class AuditEntry(models.Model):
    timestamp = models.DateTimeField(default=timezone.now)
    action = models.CharField(max_length=64)
    resource = models.CharField(max_length=255)
    # A snapshot string ("service", "ci", "cli:alice"), not a foreign key: rows outlive identities.
    user = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001 - null is "nobody" (insecure mode), kept apart from any name
    details = models.JSONField(default=dict, blank=True)
    success = models.BooleanField()
    # ``ok``, ``failed``, ``started`` (not reported back yet) or a finding that is no failure
    # (``drift``: a drift check that found drift). Empty on rows written before it existed:
    # their outcome is ``success``'s (``outcome_of``).
    outcome = models.CharField(max_length=16, blank=True, default="", db_default="")
    # Where it ran: the service's project (``default``: SERVICE_CONFIG's; see docs/projects.md),
    # the definition file's path and its own ``metadata.project``, the environment in effect, and
    # where the call came from (``audit.origin``). Empty when none applies (a read of the audit
    # log names no definition) or on rows written before they existed.
    definition = models.CharField(max_length=1024, blank=True, default="", db_default="")
    project = models.CharField(max_length=255, blank=True, default="", db_default="")
    definition_project = models.CharField(max_length=255, blank=True, default="", db_default="")
    environment = models.CharField(max_length=255, blank=True, default="", db_default="")
    origin = models.CharField(max_length=255, blank=True, default="", db_default="")
    # Set only on a tally: a row that counts repeated attempts (failed authentication from one
    # client in one minute) in ``details.count`` instead of writing a row per attempt. The key
    # names the action, reason, client and minute; every other row leaves it empty.
    tally_key = models.CharField(max_length=160, null=True, blank=True, editable=False)  # noqa: DJ001 - null keeps ordinary rows out of the unique index

    class Meta:
        ordering = ("-timestamp", "-id")
        # Partial, so the index holds the tallies only; the recorder's upsert names this predicate.
        constraints = (
            models.UniqueConstraint(fields=["tally_key"], condition=models.Q(tally_key__isnull=False),
                                    name="audit_tally_once"),
        )
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
            models.Index(fields=["success", "-timestamp", "-id"], name="audit_success_newest"),
            models.Index(fields=["user", "-timestamp", "-id"], name="audit_user_newest"),
            models.Index(fields=["project", "-timestamp", "-id"], name="audit_project_newest"),
            # GET /metrics: each project's newest scheduled run of each kind, one index seek.
            models.Index(fields=["user", "action", "project", "-timestamp", "-id"], name="audit_user_act_proj_newest"),
        )

    def __str__(self) -> str:
        outcome = outcome_of(self.outcome, self.success)
        return f"{self.timestamp:%Y-%m-%d %H:%M:%S} {self.action} {self.resource} {outcome}"


def outcome_of(outcome: str, success: bool) -> str:
    """A row's outcome: its own, or (a row older than the column) ``ok`` or ``failed``."""
    return outcome or ("ok" if success else "failed")


class AuditMention(models.Model):
    """One secret one audit row is about: its resource's, or one its details name (a sync's lists).

    Written by the recorder with the row, so ``?secret=`` is an index range scan of this table,
    newest first, instead of a search through every row's JSON. ``timestamp`` is the row's,
    copied so the scan is in the listing's own order without reading the rows it skips.
    """

    entry = models.ForeignKey(AuditEntry, on_delete=models.CASCADE, related_name="mentions", db_index=False)
    secret = models.CharField(max_length=255)
    timestamp = models.DateTimeField()

    class Meta:
        constraints = (models.UniqueConstraint(fields=["entry", "secret"], name="audit_mention_once"),)
        indexes = (models.Index(fields=["secret", "-timestamp", "-entry"], name="audit_mention_newest"),)

    def __str__(self) -> str:
        return f"{self.secret} in row {self.entry_id}"
