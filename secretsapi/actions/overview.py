"""The secrets overview: each declared secret's kind, targets, rotation dates and last drift result.

Built by ``secret_reads.secrets_overview`` from the engine's list and statuses and from the audit
log's drift checks (a check's result is known only from its row), for the admin's page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from audit.models import AuditEntry
from secretsapi.service.results import SecretStatus, SecretSummary

DRIFTED, CLEAN, UNREADABLE, NOT_CHECKED = "drifted", "no drift", "unreadable", "not checked"
# How many rows are read looking for the last check of every secret: full checks to find one
# with a result, then single-secret checks newer than it, newest first (each a bounded index scan).
FULL_CHECKS_READ = 20
SINGLE_CHECKS_READ = 10_000


@dataclass(frozen=True)
class DriftSeen:
    result: str
    checked_at: datetime | None = None


@dataclass(frozen=True)
class SecretOverview:
    name: str
    kind: str
    targets: list[str]
    generated: bool
    last_rotated: datetime | None
    due_at: datetime | None
    overdue: bool
    drift: DriftSeen


def build(summaries: Sequence[SecretSummary], statuses: Sequence[SecretStatus], now: datetime) -> list[SecretOverview]:
    """One row per secret, in definition order; ``statuses`` in the same order."""
    drift = last_drift({s.name for s in summaries})
    rows = []
    for summary, status in zip(summaries, statuses, strict=True):
        due = _time(status.due_at)
        rows.append(SecretOverview(
            name=summary.name, kind=summary.kind, targets=status.targets or summary.targets,
            generated=status.exists, last_rotated=_time(status.last_rotated), due_at=due,
            overdue=due is not None and due <= now, drift=drift.get(summary.name, DriftSeen(NOT_CHECKED)),
        ))
    return rows


def last_drift(names: set[str]) -> dict[str, DriftSeen]:
    """Each secret's result in the newest drift check that covered it (all secrets, or it alone)."""
    seen: dict[str, DriftSeen] = {}
    full = next((row for row in AuditEntry.objects.filter(action="check_drift", resource="secrets")
                 .only("timestamp", "details")[:FULL_CHECKS_READ]
                 if isinstance(row.details, dict) and "has_drift" in row.details), None)
    singles = AuditEntry.objects.filter(action="check_drift", resource__startswith="secret:")
    if full is not None:
        singles = singles.filter(timestamp__gt=full.timestamp)
    for row in singles.only("timestamp", "resource", "details")[:SINGLE_CHECKS_READ]:
        name = row.resource.removeprefix("secret:")
        if name in names and name not in seen and isinstance(row.details, dict) and "has_drift" in row.details:
            seen[name] = DriftSeen(_result(row.details, name), row.timestamp)
    if full is not None:
        for name in names - seen.keys():
            seen[name] = DriftSeen(_result(full.details, name), full.timestamp)
    return seen


def _result(details: dict[str, object], name: str) -> str:
    for key, result in (("unreadable", UNREADABLE), ("secrets_with_drift", DRIFTED)):
        listed = details.get(key)
        if isinstance(listed, list) and name in listed:
            return result
    return CLEAN


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None
