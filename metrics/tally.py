"""Counting an ended operation into its tally row: one conditional increment, created when new."""

from __future__ import annotations

import bisect

from django.db import IntegrityError, transaction
from django.db.models import F

from metrics.models import OperationTally

# Upper bounds of the duration histogram's buckets, in seconds.
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)
# Outcomes that succeeded with a finding, each its own ``outcome`` label value.
FINDINGS = frozenset({"drift"})


def add(action: str, success: bool, seconds: float, outcome: str = "") -> None:
    """Count one ended operation; runs inside the caller's transaction (the audit row's).
    ``outcome``: a finding counted apart from the other successes (``drift``)."""
    bucket = bisect.bisect_left(BUCKETS, seconds)
    outcome = outcome if success and outcome in FINDINGS else ""
    row = OperationTally.objects.filter(action=action, success=success, outcome=outcome, bucket=bucket)
    # The database's increment, never read-then-write: every worker and instance adds up exactly.
    increment = {"count": F("count") + 1, "seconds": F("seconds") + seconds}
    if row.update(**increment):
        return
    try:
        with transaction.atomic():
            OperationTally.objects.create(action=action, success=success, outcome=outcome, bucket=bucket, count=1,
                                          seconds=seconds)
    except IntegrityError:  # another process created it first
        row.update(**increment)
