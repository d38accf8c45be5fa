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
    # Index into metrics.tally.BUCKETS: the first bound at or above the duration; len(BUCKETS) is +Inf.
    bucket = models.PositiveSmallIntegerField()
    count = models.BigIntegerField(default=0)
    seconds = models.FloatField(default=0.0)

    class Meta:
        constraints = (models.UniqueConstraint(fields=["action", "success", "outcome", "bucket"],
                                               name="metrics_tally_outcome_once"),)

    def __str__(self) -> str:
        return f"{self.action} {'ok' if self.success else 'failed'} bucket {self.bucket}: {self.count}"
