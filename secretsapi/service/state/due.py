"""When a secret falls due for rotation, and whether rotating it would move it: read from the
lockfile's entries and the definition, for the checks and for a rotation's plan."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from secretsapi.service.definition.model import SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.generators.tokens import expires_at, issued_record, issuer_of
from secretsapi.service.results import RotationStatus
from secretsapi.service.state.lockfile import LockDocument, parse_time
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.secretzero_ids import aliases, secretzero_target_id

DEFAULT_WINDOW_DAYS = 7


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
    expiry = token_expiry(doc, secret)
    by_period = reference + timedelta(days=secret.rotation_days) if secret.rotation_days is not None else None
    if by_period is not None and (expiry is None or by_period <= expiry):
        due_at, why = by_period, ""
    elif expiry is not None:  # a token is replaced before it stops working
        due_at, why = expiry, " (its token expires then)"
    else:
        return RotationStatus(secret.name, False, "up to date (no rotation period)")
    left = due_at - now
    span = max((due_at - reference) / timedelta(days=1), 0)
    window = warning_days if warning_days is not None else min(DEFAULT_WINDOW_DAYS, span / 10)
    stamp = due_at.isoformat()
    if left <= timedelta(0):
        return RotationStatus(secret.name, True, f"overdue by {(-left).days} days{why}", stamp)
    if left <= timedelta(days=window):
        return RotationStatus(secret.name, True, f"due in {math.ceil(left / timedelta(days=1))} days{why}", stamp)
    return RotationStatus(secret.name, False, "up to date", stamp)


def token_expiry(doc: LockDocument, secret: SecretDef) -> datetime | None:
    """The earliest expiry of the tokens the secret's units hold (``generators.tokens``); other
    kinds' entries are not read again (a status of every secret reads each entry once)."""
    found = []
    for unit in secret.units:
        if issuer_of(unit.generator.kind) is None:
            continue
        entry = doc.entry(unit.lock_key)
        record = issued_record(entry.extra) if entry is not None else None
        moment = expires_at(record) if record is not None else None
        if moment is not None:
            found.append(moment)
    return min(found) if found else None


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
        accepted = {*ids, *(alias for p in unit.placements for alias in aliases(p.target, ctx))}
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
