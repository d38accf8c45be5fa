"""The metrics' own rows: operations and scrapes counted (one conditional increment, created when
new) and the last drift check's findings kept."""

from __future__ import annotations

import bisect
import hashlib
import os
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import F, Model, QuerySet
from django.db.models.expressions import Combinable

from audit.write_gate import audited_transaction
from metrics.models import DriftCheck, OperationTally, ScrapeTally

# Upper bounds of the duration histogram's buckets, in seconds.
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)
# Outcomes that succeeded with a finding, each its own ``outcome`` label value.
FINDINGS = frozenset({"drift"})


def add(action: str, success: bool, seconds: float, outcome: str = "", project: str = "default") -> None:
    """Count one ended operation of ``project``; runs inside the caller's transaction (the audit
    row's). ``outcome``: a finding counted apart from the other successes (``drift``)."""
    bucket = bisect.bisect_left(BUCKETS, seconds)
    outcome = outcome if success and outcome in FINDINGS else ""
    lane = {"project": project, "action": action, "success": success, "outcome": outcome, "bucket": bucket}
    _increment(OperationTally.objects.filter(**lane),
               {"count": F("count") + 1, "seconds": F("seconds") + seconds},
               OperationTally(**lane, count=1, seconds=seconds))


SCRAPE_SUCCEEDED, SCRAPE_FAILED = "succeeded", "failed"
KEY_MAX = 100
ENVIRONMENT_MAX = 64


def scraped(key: str | None, outcome: str) -> None:
    """Count one scrape of GET /metrics by ``key`` (its name; None: no key) and its ``outcome``."""
    name = (key or "")[:KEY_MAX]
    # The audit's gate first, as for every write of the shared SQLite file (audit.write_gate).
    with audited_transaction():
        _increment(ScrapeTally.objects.filter(key=name, outcome=outcome), {"count": F("count") + 1},
                   ScrapeTally(key=name, outcome=outcome, count=1))


def drift_checked(*, definition: str, environment: str | None, at: datetime, drifted: int, unreadable: int) -> None:
    """Keep what a drift check of every secret of ``definition`` in ``environment`` found, unless a
    newer check's findings are kept already (two checks ending out of order)."""
    lane = {"definition": definition_key(definition), "environment": (environment or "")[:ENVIRONMENT_MAX]}
    figures = {"checked_at": at, "drifted": drifted, "unreadable": unreadable}
    with audited_transaction():
        if DriftCheck.objects.filter(**lane, checked_at__lte=at).update(**figures):
            return
        if DriftCheck.objects.filter(**lane).exists():
            return  # a newer check's
        try:
            with transaction.atomic():
                DriftCheck.objects.create(**lane, **figures)
        except IntegrityError:  # another process kept its check first: the newer one stays
            DriftCheck.objects.filter(**lane, checked_at__lte=at).update(**figures)


def definition_key(path: str) -> str:
    """One definition's key however its path was spelled (``a/../b``, ``./b``)."""
    return hashlib.sha256(os.path.normpath(path).encode("utf-8", "surrogateescape")).hexdigest()


def _increment(row: QuerySet[Model], increment: dict[str, Combinable], new: Model) -> None:
    """Add ``increment`` to ``row``, or create it as ``new``: the database's increment, never
    read-then-write, so every worker and instance adds up exactly."""
    if row.update(**increment):
        return
    try:
        with transaction.atomic():
            new.save(force_insert=True)
    except IntegrityError:  # another process created it first
        row.update(**increment)
