"""Rotation: which secrets are due (check) and regenerating them (execute)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from secretsapi.service.definition.model import SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted
from secretsapi.service.results import OperationError, RotationCheckResult, RotationResult, RotationStatus
from secretsapi.service.state import write_transaction
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.lockfile import LockDocument, parse_time
from secretsapi.service.state.write_transaction import Plan
from secretsapi.service.workspace import Workspace

DEFAULT_WINDOW_DAYS = 7


def check_rotation(ws: Workspace, *, secret_name: str | None = None) -> RotationCheckResult:
    definition = ws.definition()
    doc = read_state(ws, definition)
    return _check(doc, definition.select(secret_name), ws)


def _check(doc: LockDocument, secrets: tuple[SecretDef, ...], ws: Workspace) -> RotationCheckResult:
    now = ws.now()
    results = [rotation_status(doc, secret, now, ws.warning_days) for secret in secrets]
    due = [r.name for r in results if r.should_rotate and r.status.startswith("due")]
    overdue = [r.name for r in results if r.should_rotate and r.status.startswith("overdue")]
    return RotationCheckResult(len(results), due, overdue, results)


def reference_time(doc: LockDocument, secret: SecretDef) -> datetime | None:
    """The oldest ``last_rotated or created_at`` over the secret's units; None if any is missing."""
    times: list[datetime] = []
    for unit in secret.units:
        entry = doc.entry(unit.lock_key)
        if entry is None:
            return None
        times.append(parse_time(entry.last_rotated or entry.created_at))
    return min(times) if times else None


def rotation_status(doc: LockDocument, secret: SecretDef, now: datetime, warning_days: int | None) -> RotationStatus:
    try:
        reference = reference_time(doc, secret)
    except LockEntryCorrupted:
        return RotationStatus(secret.name, False, "lockfile entry is corrupted; cannot tell")
    if reference is None:
        return RotationStatus(secret.name, False, "not generated yet")
    if secret.one_time:
        return RotationStatus(secret.name, False, "up to date (one-time secret, never rotated automatically)")
    if secret.rotation_days is None:
        return RotationStatus(secret.name, False, "up to date (no rotation period)")
    due_at = reference + timedelta(days=secret.rotation_days)
    left = due_at - now
    window = warning_days if warning_days is not None else min(DEFAULT_WINDOW_DAYS, secret.rotation_days / 10)
    stamp = due_at.isoformat()
    if left <= timedelta(0):
        return RotationStatus(secret.name, True, f"overdue by {(-left).days} days", stamp)
    if left <= timedelta(days=window):
        return RotationStatus(secret.name, True, f"due in {math.ceil(left / timedelta(days=1))} days", stamp)
    return RotationStatus(secret.name, False, "up to date", stamp)


def execute_rotation(ws: Workspace, *, secret_name: str | None = None, force: bool = False) -> RotationResult:
    """Rotate due secrets (all selected ones when forced).

    A one-time secret is rotated only when it is named and forced (rule 3).
    """
    definition = ws.definition()
    selected = definition.select(secret_name)

    def due(doc: LockDocument) -> Plan:
        check = {r.name: r for r in _check(doc, selected, ws).results}
        work: list[tuple[SecretDef, Sequence[Unit]]] = []
        errors: list[OperationError] = []
        for secret in selected:
            status = check[secret.name]
            if status.status.startswith("lockfile entry is corrupted") or status.status == "not generated yet":
                if secret_name is not None:
                    errors.append(OperationError(secret.name, None, f"cannot rotate: {status.status}"))
                continue
            if secret.one_time and not (force and secret_name is not None):
                continue
            if force or status.should_rotate:
                work.append((secret, secret.units))
        return Plan(work, [], errors)

    planned, outcome = write_transaction.write(ws, definition, due, rotation=True)
    failed = [e.secret for e in planned.errors] + (outcome.failed if outcome else [])
    rotated = outcome.stored if outcome else []
    errors = planned.errors + (outcome.errors if outcome else [])
    return RotationResult(rotated, failed, errors, _message(rotated, failed))


def _message(rotated: list[str], failed: list[str]) -> str:
    if not rotated and not failed:
        return "No secrets needed rotation."
    text = f"Rotated {len(rotated)} secret(s)."
    return text + (f" {len(failed)} failed." if failed else "")
