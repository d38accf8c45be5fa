"""Repair: put a secret's recorded value back into targets that lost it, without rotating it.

A target is broken when it is missing, holds another value (or the recorded one written so
standard readers misparse it), is not yet recorded for the secret, or cannot be read (its store
failed: the write is retried); a write-only target (its value cannot be read) when it is missing
or the store wrote it after the lockfile's time for it. Its value is copied from another target
of the secret whose content matches the lockfile's hash; with no such copy the secret is left
alone and reported (only a forced sync can replace it).

Every sync completes its secrets' targets this way (as SecretZero's sync writes a target it has
not recorded or whose file is gone). Only a repair (``overwrite``) replaces a recorded target
that holds another value: someone changed it, and a plain sync reports that instead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from secretsapi.service.definition.model import Placement, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.results import OperationError
from secretsapi.service.state.lockfile import LockDocument, LockEntry
from secretsapi.service.state.readback import Copy, read_back_all
from secretsapi.service.state.write_only import changed_after, recorded_at, with_writes
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.base import ReadBack
from secretsapi.service.targets.fanout import read_groups
from secretsapi.service.targets.secretzero_ids import aliases, recorded_hash
from secretsapi.service.util.hashing import sha256_text

NO_COPY = "no target holds the recorded value: sync with force to replace it"
CHANGED = "holds another value than the lockfile records: sync with repair to put the recorded one back"


@dataclass(frozen=True)
class Repair:
    """One unit's broken targets (``unit.placements``) and the recorded value to put back."""

    secret: SecretDef
    unit: Unit
    value_hash: str
    value: str = field(repr=False)  # never in a log line or a traceback


@dataclass(frozen=True)
class RepairPlan:
    repairs: list[Repair]
    errors: list[OperationError]

    @property
    def secrets(self) -> list[str]:
        return list(dict.fromkeys(repair.secret.name for repair in self.repairs))


def plan_repairs(doc: LockDocument, secrets: Sequence[SecretDef], ctx: TargetContext, *,
                 overwrite: bool = True) -> RepairPlan:
    """Which recorded units have broken targets, each with the verified copy to restore.

    Units without an entry (a sync generates them) or with a corrupted one (the sync reports
    it) are passed over. A target that cannot be read is written again: nothing says it holds
    the value. Without ``overwrite``, a recorded target holding another value is an error, not
    a repair.
    """
    checks: dict[tuple[str, Hashable], list[tuple[SecretDef, Unit, LockEntry, Placement, str]]] = defaultdict(list)
    for secret in secrets:
        for unit in secret.units:
            try:
                entry = doc.entry(unit.lock_key)
            except LockEntryCorrupted:
                continue
            if entry is None:
                continue
            for placement in unit.placements:
                try:
                    kind = get_kind(placement.target.type)
                    checks[(kind.type, kind.group(placement.target, ctx))].append(
                        (secret, unit, entry, placement, kind.target_id(placement.target, ctx))
                    )
                except TargetError:
                    continue  # an unsupported kind: the sync reports it when it writes

    broken: dict[str, list[Placement]] = defaultdict(list)
    units: dict[str, tuple[SecretDef, Unit, LockEntry]] = {}
    batch = list(checks.items())
    reads = read_groups([(get_kind(type_), [member[3] for member in members]) for (type_, _), members in batch], ctx)
    errors: list[OperationError] = []
    refused: set[str] = set()
    unreadable: dict[str, tuple[str, str]] = {}  # lock key -> a target whose read failed, and why
    for (_, members), backs in zip(batch, reads, strict=True):
        for secret, unit, entry, placement, target_id in members:
            expected = recorded_hash(entry.targets, target_id, placement.target, ctx)
            if isinstance(backs, TargetError):
                unreadable.setdefault(unit.lock_key, (target_id, backs.message))
            else:
                back = backs[placement.key]
                if back.present and expected is not None and not back.verifiable:
                    written_at = recorded_at(entry, (target_id, *aliases(placement.target, ctx)))
                    if changed_after(back, written_at) is not True:
                        continue  # nothing says it changed: leave it
                    if not overwrite:
                        errors.append(OperationError(secret.name, target_id, CHANGED))
                        continue
                elif back.present and expected is not None and back.hash == expected:
                    continue
                elif back.present and expected is not None and not overwrite:
                    # The recorded value in a dotenv line SecretZero reads right: only a repair rewrites it.
                    if not _misencoded(back, entry.hash):
                        errors.append(OperationError(secret.name, target_id, CHANGED))
                    continue
            broken[unit.lock_key].append(placement)
            units[unit.lock_key] = (secret, unit, entry)

    repairs: list[Repair] = []
    for (lock_key, placements), copy in zip(broken.items(), _copies(broken, units, ctx), strict=True):
        secret, unit, entry = units[lock_key]
        if copy is None:
            if secret.name not in refused:
                target, why = unreadable.get(lock_key, (None, ""))
                errors.append(OperationError(secret.name, target, f"{NO_COPY} ({why})" if why else NO_COPY))
                refused.add(secret.name)
            continue
        repairs.append(Repair(secret, Unit(unit.lock_key, unit.generator, tuple(placements)), entry.hash, copy.value))
    # A secret is repaired whole or left alone: one unit without a copy leaves its others too.
    repairs = [repair for repair in repairs if repair.secret.name not in refused]
    order = {secret.name: index for index, secret in enumerate(secrets)}
    repairs.sort(key=lambda repair: order[repair.secret.name])
    return RepairPlan(repairs, errors)


def _misencoded(back: ReadBack, value_hash: str) -> bool:
    return back.misencoded_value is not None and sha256_text(back.misencoded_value) == value_hash


def _copies(broken: dict[str, list[Placement]], units: dict[str, tuple[SecretDef, Unit, LockEntry]],
            ctx: TargetContext) -> list[Copy | None]:
    """Each broken unit's verified copy, units read concurrently."""
    found = read_back_all([(units[key][1], units[key][2].hash) for key in broken], ctx)
    return [unit.recorded for unit in found]


def record_repairs(doc: LockDocument, repairs: Sequence[Repair], written: dict[str, dict[str, str]],
                   now: datetime | None = None) -> bool:
    """Add the repaired targets' hashes to their entries; the value hash and timestamps stay.
    Every rewritten target gets a ``target_provenance`` record at ``now`` (after the writes).

    An entry whose value changed since the plan (a concurrent forced sync) is left as it is.
    Returns whether any entry changed.
    """
    changed = False
    for repair in repairs:
        hashes = written.get(repair.unit.lock_key)
        try:
            entry = doc.entry(repair.unit.lock_key)
        except LockEntryCorrupted:
            continue
        if not hashes or entry is None or entry.hash != repair.value_hash:
            continue
        targets = {**entry.targets, **hashes}
        extra = with_writes(entry.extra, hashes, now or datetime.now(UTC))
        doc.set_entry(repair.unit.lock_key, LockEntry(
            hash=entry.hash, created_at=entry.created_at, updated_at=entry.updated_at,
            last_rotated=entry.last_rotated, rotation_count=entry.rotation_count,
            definition_hash=entry.definition_hash, targets=targets, extra=extra,
        ))
        changed = True
    return changed
