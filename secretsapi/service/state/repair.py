"""Repair: put a secret's recorded value back into targets that lost it, without rotating it.

A target is broken when it is missing, holds another value (or the recorded one written so
standard readers misparse it), is not yet recorded for the secret, or cannot be read (its store
failed: the write is retried); a write-only target (its value cannot be read) when it is missing
or the store wrote it after the lockfile's time for it. Its value is copied from another target
of the secret whose content matches the lockfile's hash; a unit with no such copy is left alone
and reported with what will fix it: a forced sync (a new value), or an import (the value a
target holds now, recorded). A template output is broken for a unit it does not hold the current
value of (``state.rendered``): rendered again with every unit's current value.

Every sync completes its secrets' targets this way (as SecretZero's sync writes a target it has
not recorded or whose file is gone). Only a repair (``overwrite``) replaces a recorded target
that holds another value: someone changed it, and a plain sync reports that instead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from secretsapi.service.definition.egress import READ_SETTING
from secretsapi.service.definition.model import Placement, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.results import OperationError
from secretsapi.service.state import rendered
from secretsapi.service.state.lockfile import LockDocument, LockEntry
from secretsapi.service.state.readback import Copy, read_back_all
from secretsapi.service.state.rendered import classify, is_template, member
from secretsapi.service.state.write_only import changed_after, recorded_at, with_writes
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.base import ReadBack
from secretsapi.service.targets.fanout import read_groups
from secretsapi.service.targets.secretzero_ids import aliases, recorded_hash
from secretsapi.service.util.hashing import sha256_text

# Each error names what fixes it: a repair when a copy of the recorded value is left, else a forced
# sync (a new value) or, when a target holds another value, an import (that value recorded).
NO_COPY = "no target holds the recorded value: sync with force to generate a new one"
_ANOTHER = "holds another value than the lockfile records, and no target holds the recorded one"
NO_COPY_HELD = f"{_ANOTHER}: import to record the value it holds, or sync with force to generate a new one"
NO_COPY_CHANGED = f"{_ANOTHER}: sync with force to generate a new one"  # a value import cannot read
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
    a repair. A template output is broken for a unit when it is not current for it
    (``state.rendered``): a stale one is ours to render again, a changed one someone's edit.
    Each unit is repaired when a copy of its value is left, or named in ``errors`` with what
    fixes it (``NO_COPY``, ``NO_COPY_HELD``).
    """
    checks: dict[tuple[str, Hashable], list[_Member]] = defaultdict(list)
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

    found = _Found()
    batch = list(checks.items())
    reads = read_groups([(get_kind(type_), [member[3] for member in members]) for (type_, _), members in batch], ctx)
    for (_, members), backs in zip(batch, reads, strict=True):
        if isinstance(backs, TargetError):
            for secret, unit, entry, placement, target_id in members:
                found.unreadable.setdefault(unit.lock_key, (target_id, backs.message))
                found.broke(secret, unit, entry, placement)
        elif is_template(members[0][3]):
            _check_output(members, backs, ctx, found, overwrite=overwrite)
        else:
            for member in members:
                _check_target(member, backs[member[3].key], ctx, found, overwrite=overwrite)
    return _plan(found, secrets, ctx)


_Member = tuple[SecretDef, Unit, LockEntry, Placement, str]


@dataclass
class _Found:
    """What the reads found, per lock key."""

    broken: dict[str, list[Placement]] = field(default_factory=lambda: defaultdict(list))
    changed: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # target ids, not overwritten
    held: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # target ids import can read
    units: dict[str, tuple[SecretDef, Unit, LockEntry]] = field(default_factory=dict)
    unreadable: dict[str, tuple[str, str]] = field(default_factory=dict)  # a target whose read failed, and why

    def broke(self, secret: SecretDef, unit: Unit, entry: LockEntry, placement: Placement) -> None:
        self.broken[unit.lock_key].append(placement)
        self.units[unit.lock_key] = (secret, unit, entry)

    def differs(self, secret: SecretDef, unit: Unit, entry: LockEntry, target_id: str) -> None:
        self.changed[unit.lock_key].append(target_id)
        self.units[unit.lock_key] = (secret, unit, entry)


def _check_target(member: _Member, back: ReadBack, ctx: TargetContext, found: _Found, *, overwrite: bool) -> None:
    secret, unit, entry, placement, target_id = member
    expected = recorded_hash(entry.targets, target_id, placement.target, ctx)
    if back.present and expected is not None and not back.verifiable:
        written_at = recorded_at(entry, (target_id, *aliases(placement.target, ctx)))
        if changed_after(back, written_at) is not True:
            return  # nothing says it changed: leave it
        if not overwrite:
            found.differs(secret, unit, entry, target_id)
            return
    elif back.present and expected is not None and back.hash == expected:
        return
    elif back.present and expected is not None:
        # The recorded value in a dotenv line SecretZero reads right: only a repair rewrites it.
        misencoded = _misencoded(back, entry.hash)
        if not misencoded and back.value is not None:
            found.held[unit.lock_key].append(target_id)
        if not overwrite:
            if not misencoded:
                found.differs(secret, unit, entry, target_id)
            return
    found.broke(secret, unit, entry, placement)


def _check_output(members: list[_Member], backs: dict[str, ReadBack], ctx: TargetContext, found: _Found, *,
                  overwrite: bool) -> None:
    """One template output under each unit placed in it (``state.rendered.classify``)."""
    back = backs[members[0][3].key]
    if not back.present or back.hash is None:
        for secret, unit, entry, placement, _ in members:
            found.broke(secret, unit, entry, placement)
        return
    placed = [member(placement, entry, (target_id, *aliases(placement.target, ctx)), ctx)
              for _, _, entry, placement, target_id in members]
    for (secret, unit, entry, placement, target_id), state in zip(members, classify(back.hash, placed), strict=True):
        if state in (rendered.CURRENT, rendered.UNRECORDED):
            continue  # not recorded for it, but rendered with its value: the next render records it
        if state == rendered.CHANGED and not overwrite:
            found.differs(secret, unit, entry, target_id)
        else:
            found.broke(secret, unit, entry, placement)


def _plan(found: _Found, secrets: Sequence[SecretDef], ctx: TargetContext) -> RepairPlan:
    """Repairs for the units with a copy of their value; errors naming what fixes the others."""
    keys = list(dict.fromkeys([*found.broken, *found.changed]))
    errors: list[OperationError] = []
    repairs: list[Repair] = []
    for lock_key, (copy, refused) in zip(keys, _copies(keys, found.units, ctx), strict=True):
        secret, unit, entry = found.units[lock_key]
        changed = found.changed.get(lock_key, [])
        if copy is None:
            # A copy the operator's rule kept from being read says so, naming the setting.
            errors += [OperationError(secret.name, None, problem) for problem in refused]
            held = found.held.get(lock_key, [])
            named = list(dict.fromkeys([*changed, *held]))
            if named:
                errors += [OperationError(secret.name, target, NO_COPY_HELD if held else NO_COPY_CHANGED)
                           for target in named]
            else:
                target, why = found.unreadable.get(lock_key, (None, ""))
                errors.append(OperationError(secret.name, target, f"{NO_COPY} ({why})" if why else NO_COPY))
            continue
        errors += [OperationError(secret.name, target, CHANGED) for target in changed]
        placements = found.broken.get(lock_key)
        if placements:
            repairs.append(Repair(secret, Unit(unit.lock_key, unit.generator, tuple(placements)), entry.hash,
                                  copy.value))
    order = {secret.name: index for index, secret in enumerate(secrets)}
    repairs.sort(key=lambda repair: order[repair.secret.name])
    return RepairPlan(repairs, list(dict.fromkeys(errors)))  # a template secret's fields may say it twice


def _misencoded(back: ReadBack, value_hash: str) -> bool:
    return back.misencoded_value is not None and sha256_text(back.misencoded_value) == value_hash


def _copies(keys: Sequence[str], units: dict[str, tuple[SecretDef, Unit, LockEntry]],
            ctx: TargetContext) -> list[tuple[Copy | None, list[str]]]:
    """Each unit's verified copy, units read concurrently, with the reads the operator's rule
    refused (SERVICE_PROVIDER_READ)."""
    found = read_back_all([(units[key][1], units[key][2].hash) for key in keys], ctx)
    return [(unit.recorded, [p for p in unit.problems if READ_SETTING in p]) for unit in found]


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
