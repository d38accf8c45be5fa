"""Rotation: which secrets are due (check) and regenerating them (execute)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.progress import Progress
from secretsapi.service.results import OperationError, RotationCheckResult, RotationResult, RotationStatus
from secretsapi.service.state import write_transaction
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.lockfile import LockDocument, parse_time
from secretsapi.service.state.value_store import written_targets
from secretsapi.service.state.write_transaction import Plan
from secretsapi.service.sync import without_environment
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.secretzero_ids import aliases, secretzero_target_id
from secretsapi.service.workspace import Workspace

DEFAULT_WINDOW_DAYS = 7


def check_rotation(ws: Workspace, *, secret_name: str | None = None) -> RotationCheckResult:
    """Which secrets are due. A secret that a rotation would move (see ``move_problem``) keeps
    its due state, and its status says why it cannot be rotated with these var files."""
    definition = ws.definition()
    doc = read_state(ws, definition)
    return _check(doc, definition, definition.select(secret_name), ws)


def _check(
    doc: LockDocument, definition: Definition, secrets: tuple[SecretDef, ...], ws: Workspace
) -> RotationCheckResult:
    now = ws.now()
    ctx = TargetContext.of(definition)
    results = []
    for secret in secrets:
        status = rotation_status(doc, secret, now, ws.warning_days)
        problem = move_problem(doc, secret, ctx, ws.var_files)
        results.append(replace(status, status=f"{status.status}; {problem}") if problem else status)
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


def due_time(doc: LockDocument, secret: SecretDef) -> datetime | None:
    """When ``secret`` falls due (its period after ``reference_time``); None when it never does
    (one-time, no period) or is not generated yet."""
    if secret.one_time or secret.rotation_days is None:
        return None
    reference = reference_time(doc, secret)
    return None if reference is None else reference + timedelta(days=secret.rotation_days)


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


def execute_rotation(
    ws: Workspace, *, secret_name: str | None = None, force: bool = False, progress: Progress | None = None
) -> RotationResult:
    """Rotate due secrets (all selected ones when forced).

    A one-time secret is rotated only when it is named and forced (rule 3). A rotation never
    moves a secret: one whose recorded targets this rendering of the definition would not all
    write fails, and nothing is written for it (``move_problem``). ``progress`` counts the
    secrets rotated of those due (see ``value_store.store``).
    """
    definition = ws.definition()
    selected = definition.select(secret_name)
    ctx = TargetContext.of(definition)

    def due(doc: LockDocument) -> Plan:
        now = ws.now()
        work: list[tuple[SecretDef, Sequence[Unit]]] = []
        errors: list[OperationError] = []
        for secret in selected:
            status = rotation_status(doc, secret, now, ws.warning_days)
            if status.status.startswith("lockfile entry is corrupted") or status.status == "not generated yet":
                if secret_name is not None:
                    errors.append(OperationError(secret.name, None, f"cannot rotate: {status.status}"))
                continue
            if secret.one_time and not (force and secret_name is not None):
                continue
            if force or status.should_rotate:
                problem = move_problem(doc, secret, ctx, ws.var_files)
                if problem:
                    errors.append(OperationError(secret.name, None, f"not rotated: {problem}"))
                    continue
                work.append((secret, secret.units))
        return Plan(work, [], errors)

    planned, outcome = write_transaction.write(ws, definition, due, rotation=True, progress=progress)
    failed = [e.secret for e in planned.errors] + (outcome.failed if outcome else [])
    rotated = outcome.stored if outcome else []
    errors = without_environment(definition, planned.errors + (outcome.errors if outcome else []))
    partial = written_targets(outcome, partial_only=True, hide=definition.environment_hidden) if outcome else {}
    return RotationResult(rotated, failed, errors, _message(rotated, failed), partial)


def move_problem(doc: LockDocument, secret: SecretDef, ctx: TargetContext, var_files: Sequence[str]) -> str | None:
    """Why rotating ``secret`` would move it, or None.

    A rotation records only the targets it writes, so a target the lockfile records but this
    rendering does not declare (the secret was synced with other var files, or the definition
    lost the target) would keep the old value and drop out of the lockfile. Moving a secret
    is a forced sync's job.
    """
    recorded: dict[str, None] = {}
    rendered: dict[str, None] = {}
    moves = False
    for unit in secret.units:
        try:
            entry = doc.entry(unit.lock_key)
        except LockEntryCorrupted:
            return None  # reported as such by the status; a rotation skips it
        if entry is None:
            continue
        ids = _declared_ids(unit, ctx)
        # A lockfile SecretZero wrote may record a target under its own id (see secretzero_ids).
        accepted = {*ids, *(alias for p in unit.placements for alias in aliases(p.target))}
        moves = moves or any(tid not in accepted for tid in entry.targets)
        recorded.update(dict.fromkeys(entry.targets))
        rendered.update(dict.fromkeys(ids))
    if not moves:
        return None
    given = f"var files [{', '.join(var_files)}]" if var_files else "no var files"
    return (
        f"rotating would move it: the lockfile records its targets [{', '.join(recorded)}], but the "
        f"definition rendered with {given} has [{', '.join(rendered)}]; pass the var files it was synced "
        "with (or move it with a forced sync)"
    )


def _declared_ids(unit: Unit, ctx: TargetContext) -> list[str]:
    """The target ids a write of ``unit`` would record, in definition order."""
    ids: list[str] = []
    for placement in unit.placements:
        target = placement.target
        try:
            ids.append(get_kind(target.type).target_id(target, ctx))
        except TargetError:  # a kind this service cannot write: the id SecretZero records for it
            ids.append(secretzero_target_id(target))
    return ids


def _message(rotated: list[str], failed: list[str]) -> str:
    if not rotated and not failed:
        return "No secrets needed rotation."
    text = f"Rotated {len(rotated)} secret(s)."
    return text + (f" {len(failed)} failed." if failed else "")
