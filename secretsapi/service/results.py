"""Frozen results of every operation; partial outcomes are data, not exceptions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class SecretSummary:
    name: str
    kind: str
    rotation_period: str | None
    targets: list[str]
    one_time: bool = False
    description: str | None = None


@dataclass(frozen=True)
class SecretStatus:
    name: str
    exists: bool
    created_at: str | None = None
    updated_at: str | None = None
    last_rotated: str | None = None
    rotation_count: int = 0
    targets: list[str] = field(default_factory=list)
    # When rotation falls due (ISO 8601), as the rotation check computes it; None for a one-time
    # secret, one without a rotation period, or when the definition does not declare it.
    due_at: str | None = None
    # How the value last changed (at ``updated_at``): generated, rotated, regenerated (a forced
    # sync), imported, or changed (by a tool that does not say how); see ``state.changes``.
    last_change: str | None = None


@dataclass(frozen=True)
class OperationError:
    """One failure of one secret at one target (target None: before any target, e.g. generation)."""

    secret: str
    target: str | None
    message: str


@dataclass(frozen=True)
class SyncResult:
    secrets_generated: list[str]
    secrets_skipped: list[str]
    secrets_failed: list[str]
    errors: list[OperationError]
    dry_run: bool
    message: str
    # Existing secrets whose broken targets got their recorded value back (a repair).
    secrets_repaired: list[str] = field(default_factory=list)
    # Secrets a target failed for: lock key -> the targets that do hold the new value.
    written_targets: dict[str, list[str]] = field(default_factory=dict)
    # Secrets whose value was imported, not generated: name -> source kind (``env``, ``file``...).
    sources: dict[str, str] = field(default_factory=dict)
    # With refresh: lock key -> the recorded target ids dropped (the definition no longer names them).
    refreshed: dict[str, list[str]] = field(default_factory=dict)
    # Every unit written: lock key -> the target ids that took its new value (webhooks name them).
    written: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class RotationStatus:
    name: str
    should_rotate: bool
    status: str
    due_at: str | None = None


@dataclass(frozen=True)
class RotationCheckResult:
    secrets_checked: int
    secrets_due: list[str]
    secrets_overdue: list[str]
    results: list[RotationStatus]


@dataclass(frozen=True)
class RotationResult:
    rotated: list[str]
    failed: list[str]
    errors: list[OperationError]
    message: str
    # Secrets a target failed for: lock key -> the targets that do hold the new value.
    written_targets: dict[str, list[str]] = field(default_factory=dict)
    # Secrets whose value was imported again, not generated: name -> source kind.
    sources: dict[str, str] = field(default_factory=dict)
    # Every unit written: lock key -> the target ids that took its new value (webhooks name them).
    written: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class PolicyItem:
    secret: str
    policy: str
    message: str
    severity: str


@dataclass(frozen=True)
class PolicyResult:
    compliant: bool
    errors: list[PolicyItem]
    warnings: list[PolicyItem]
    info: list[PolicyItem]


@dataclass(frozen=True)
class DriftItem:
    secret: str
    message: str
    details: dict[str, Any]


@dataclass(frozen=True)
class DriftResult:
    has_drift: bool
    secrets_with_drift: list[str]
    details: list[DriftItem]


@dataclass(frozen=True)
class SecretOutcome:
    secret: str
    outcome: str  # generated | repaired | skipped | partial | failed
    errors: list[OperationError]


@dataclass(frozen=True)
class AgentSyncResult:
    status: str  # complete | partial | failed | nothing_to_do
    sync: SyncResult
    outcomes: list[SecretOutcome]


@dataclass(frozen=True)
class RenderResult:
    config: dict[str, Any]
    variables_used: list[str]
    environment_used: list[str]
    var_files: list[str]


@dataclass(frozen=True)
class RevealedSecret:
    definition: SecretSummary
    status: SecretStatus
    # A plain secret's value, or {field: value} for a template secret.
    value: str | dict[str, str | None] | None
    verified: bool
    sources: dict[str, str | None]
    messages: list[str]

    def __repr__(self) -> str:  # never print the value
        return f"RevealedSecret({self.definition.name!r}, verified={self.verified})"


@dataclass(frozen=True)
class ValidationReport:
    valid: bool
    errors: list[str]
    warnings: list[str]


@dataclass(frozen=True)
class CleanResult:
    removed: list[str]  # lock keys of secrets the definition no longer has
    dry_run: bool
    message: str


@dataclass(frozen=True)
class ImportRow:
    """One lock key: imported | updated | unchanged | skipped | error (dry run: would_import,
    would_update), and why (never a value)."""

    secret: str
    lock_key: str
    status: str
    detail: str


@dataclass(frozen=True)
class ImportResult:
    rows: list[ImportRow]
    errors: list[OperationError]
    dry_run: bool
    message: str
    refreshed: dict[str, list[str]] = field(default_factory=dict)

    def count(self, *statuses: str) -> int:
        return sum(1 for row in self.rows if row.status in statuses)


def sync_summary(
    generated: list[str], skipped: list[str], failed: list[str], repaired: Sequence[str] = (), *,
    dry_run: bool = False, errors: int = 0,
) -> str:
    """A sync's one-line summary; ``incomplete`` when anything failed (the CLI merges several)."""
    verb = "would be generated" if dry_run else "generated"
    parts = [f"{len(generated)} secret(s) {verb}", f"{len(skipped)} skipped"]
    if repaired:
        parts.append(f"{len(repaired)} {'would be repaired' if dry_run else 'repaired'}")
    if failed:
        parts.append(f"{len(failed)} failed")
    if errors:
        parts.append(f"{errors} error(s)")
    if dry_run:
        return "Dry run: " + ", ".join(parts) + "."
    return ("Sync incomplete: " if failed or errors else "Sync complete: ") + ", ".join(parts) + "."
