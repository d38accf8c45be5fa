"""What a write is asked for (plain data) and what it will do, planned on a lockfile document.

A write plans twice: on an unlocked read, to know which targets to lock, and again under
those locks, on the lockfile as it is then (another write may have just committed). Both
plans come from the same request, so they differ only by what the lockfile says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted
from secretsapi.service.results import OperationError
from secretsapi.service.state.due import move_problem, rotation_status
from secretsapi.service.state.lockfile import LockDocument
from secretsapi.service.targets import TargetContext


@dataclass(frozen=True)
class SyncRequest:
    """Generate the selected secrets that have no lockfile entry yet; every one when forced."""

    secrets: tuple[SecretDef, ...]
    force: bool = False


@dataclass(frozen=True)
class RotationRequest:
    """Rotate the selected secrets that are due; every one when forced.

    A one-time secret only when it is ``named`` and forced (rule 3). ``var_files`` are the
    run's, named when a rotation would move a secret (``due.move_problem``).
    """

    secrets: tuple[SecretDef, ...]
    force: bool = False
    named: bool = False
    warning_days: int | None = None
    var_files: tuple[str, ...] = ()
    # A source credential whose standby is in its grace period is rotated anyway, cutting that
    # grace short (a rotation forced by hand: a leaked credential); else it waits for the grace.
    cut_grace: bool = False


@dataclass(frozen=True)
class Plan:
    work: list[tuple[SecretDef, Sequence[Unit]]]
    skipped: list[str]
    errors: list[OperationError]


def plan(doc: LockDocument, definition: Definition, request: SyncRequest | RotationRequest, now: datetime) -> Plan:
    if isinstance(request, RotationRequest):
        return plan_rotation(doc, definition, request, now)
    return plan_sync(doc, request)


def plan_sync(doc: LockDocument, request: SyncRequest) -> Plan:
    """Which units to generate: missing ones, or every one when forced.

    A corrupted lockfile entry blocks its secret unless forced (then it is replaced), so a
    sync never silently overwrites state it cannot read.
    """
    work: list[tuple[SecretDef, Sequence[Unit]]] = []
    skipped: list[str] = []
    errors: list[OperationError] = []
    for secret in request.secrets:
        todo: list[Unit] = []
        try:
            for unit in secret.units:
                if request.force or doc.entry(unit.lock_key, extra=False) is None:
                    todo.append(unit)
        except LockEntryCorrupted as exc:
            errors.append(OperationError(secret.name, None, f"{exc.message}; sync with force to replace it"))
            continue
        if todo:
            work.append((secret, todo))
        else:
            skipped.append(secret.name)
    return Plan(work, skipped, errors)


def plan_rotation(doc: LockDocument, definition: Definition, request: RotationRequest, now: datetime) -> Plan:
    """The due secrets (every selected one when forced). A rotation never moves a secret: one
    whose recorded targets this rendering of the definition would not all write fails, and
    nothing is written for it."""
    ctx = TargetContext.of(definition)
    work: list[tuple[SecretDef, Sequence[Unit]]] = []
    errors: list[OperationError] = []
    for secret in request.secrets:
        status = rotation_status(doc, secret, now, request.warning_days)
        if status.status.startswith("lockfile entry is corrupted") or status.status == "not generated yet":
            if request.named:
                errors.append(OperationError(secret.name, None, f"cannot rotate: {status.status}"))
            continue
        if secret.one_time and not (request.force and request.named):
            continue
        if request.force or status.should_rotate:
            problem = move_problem(doc, secret, ctx, request.var_files)
            if problem:
                errors.append(OperationError(secret.name, None, f"not rotated: {problem}"))
                continue
            work.append((secret, secret.units))
    return Plan(work, [], errors)
