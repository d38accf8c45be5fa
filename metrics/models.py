"""Operation tallies: how many of each operation ended, by outcome and duration bucket."""

from __future__ import annotations

from django.db import models


class OperationTally(models.Model):
    """One duration bucket of one operation and outcome: how many ended in it, and their seconds.

    Written in the transaction that completes each operation's audit row (``metrics.tally``),
    so a scrape reads a few dozen rows instead of aggregating the whole audit log.
    """

    action = models.CharField(max_length=64)
    success = models.BooleanField()
    # A finding that is no failure (``drift``: a drift check that found drift), counted apart from
    # the other successes; empty otherwise.
    outcome = models.CharField(max_length=16, blank=True, default="", db_default="")
    # The service project it ran in (rows counted before projects: the default one's).
    project = models.CharField(max_length=63, default="default", db_default="default")
    # Index into metrics.tally.BUCKETS: the first bound at or above the duration; len(BUCKETS) is +Inf.
    bucket = models.PositiveSmallIntegerField()
    count = models.BigIntegerField(default=0)
    seconds = models.FloatField(default=0.0)

    class Meta:
        constraints = (models.UniqueConstraint(fields=["project", "action", "success", "outcome", "bucket"],
                                               name="metrics_tally_project_once"),)

    def __str__(self) -> str:
        return f"{self.action} {'ok' if self.success else 'failed'} bucket {self.bucket}: {self.count}"


class ScrapeTally(models.Model):
    """How many scrapes of GET /metrics one key made, by outcome: a counter, not an audit row each.

    ``key`` is the key's name (``service``, a named key's) or empty for a scrape without a key
    (SERVICE_METRICS_PUBLIC, insecure mode). Incremented by ``metrics.tally.scraped``.
    """

    key = models.CharField(max_length=100, blank=True)
    outcome = models.CharField(max_length=16)
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = (models.UniqueConstraint(fields=["key", "outcome"], name="metrics_scrape_tally_once"),)

    def __str__(self) -> str:
        return f"{self.key or '(no key)'} {self.outcome}: {self.count}"


class DriftCheck(models.Model):
    """What the last drift check of every secret of one definition and environment found.

    One row per (definition, environment), replaced by each such check that produced a result
    (``metrics.tally.drift_checked``); a check of one secret, or one that failed before reading
    the targets, leaves it as it was. ``environment`` is empty for the definition's default lane.
    """

    # The SHA-256 of the definition's path (``metrics.tally.definition_key``): any path fits.
    definition = models.CharField(max_length=64)
    environment = models.CharField(max_length=64, blank=True)
    checked_at = models.DateTimeField()
    # Secrets with drift, and of those the ones a target of which could not be read back.
    drifted = models.PositiveIntegerField()
    unreadable = models.PositiveIntegerField()

    class Meta:
        constraints = (models.UniqueConstraint(fields=["definition", "environment"], name="metrics_drift_check_once"),)

    def __str__(self) -> str:
        return f"{self.definition} [{self.environment or 'default'}]: {self.drifted} drifted at {self.checked_at}"
