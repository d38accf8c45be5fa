"""What the audit log says happened per day: operations by outcome, and rotations, for the charts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from audit.models import AuditEntry


@dataclass(frozen=True)
class Day:
    day: date
    ok: int
    failed: int
    # Operations that succeeded with a finding that calls for attention (a drift check that found drift).
    drift: int = 0


@dataclass(frozen=True)
class Activity:
    # Audit rows per day (a tally of failed attempts is one row), oldest day first.
    operations: list[Day]
    # Secrets rotated and secrets that failed to rotate per day; a rotation that failed before
    # naming any secret (a definition error) counts as one failure.
    rotations: list[Day]


def activity(days: int, now: datetime | None = None) -> Activity:
    """The last ``days`` days, today (in the site's zone) included; days without rows are zeros."""
    today = timezone.localdate(now or timezone.now())
    first = today - timedelta(days=days - 1)
    since = timezone.make_aware(datetime.combine(first, datetime.min.time()))
    recent = AuditEntry.objects.filter(timestamp__gte=since)
    counts: dict[tuple[date, str], int] = {}
    for row in (recent.annotate(day=TruncDate("timestamp")).values("day", "success", "outcome")
                .annotate(n=Count("id"))):
        kind = "failed" if not row["success"] else ("drift" if row["outcome"] == "drift" else "ok")
        counts[(row["day"], kind)] = counts.get((row["day"], kind), 0) + row["n"]
    rotated: dict[date, list[int]] = {}
    for stamp, success, details in recent.filter(action="execute_rotation").values_list(
            "timestamp", "success", "details"):
        tally = rotated.setdefault(timezone.localdate(stamp), [0, 0])
        named = details if isinstance(details, dict) else {}
        if named.get("state") == "started":
            continue  # never reported back: no outcome to count
        tally[0] += len(named.get("rotated") or [])
        failed = len(named.get("failed") or [])
        tally[1] += failed or (0 if success else 1)
    span = [first + timedelta(days=i) for i in range(days)]
    return Activity(
        operations=[Day(d, counts.get((d, "ok"), 0), counts.get((d, "failed"), 0), counts.get((d, "drift"), 0))
                    for d in span],
        rotations=[Day(d, *rotated.get(d, [0, 0])) for d in span],
    )
