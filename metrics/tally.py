"""Counting an ended operation into its tally row: one conditional increment, created when new."""

from __future__ import annotations

import bisect

from django.db import IntegrityError, transaction
from django.db.models import F

from metrics.models import OperationTally

# Upper bounds of the duration histogram's buckets, in seconds.
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)


def add(action: str, success: bool, seconds: float) -> None:
    """Count one ended operation; runs inside the caller's transaction (the audit row's)."""
    bucket = bisect.bisect_left(BUCKETS, seconds)
    row = OperationTally.objects.filter(action=action, success=success, bucket=bucket)
    # The database's increment, never read-then-write: every worker and instance adds up exactly.
    increment = {"count": F("count") + 1, "seconds": F("seconds") + seconds}
    if row.update(**increment):
        return
    try:
        with transaction.atomic():
            OperationTally.objects.create(action=action, success=success, bucket=bucket, count=1, seconds=seconds)
    except IntegrityError:  # another process created it first
        row.update(**increment)
