"""Target provenance, and write-only targets (GitHub secrets, Jenkins credentials): their values
cannot be read back, so drift and repair compare the store's last write with the time the
lockfile recorded for it.

Every target write gets a ``target_provenance`` record, as SecretZero's ``record_target_update``
writes one (the last three kept), its actor the writer's ``sync_identity``.

The lockfile's time for a target is the latest of the entry's ``updated_at`` (the value's last
generation, taken before the writes) and SecretZero's ``target_provenance`` records for that
target (SecretZero writes one per target write). Here a sync, rotation or repair adds one, taken
once the writes ended, for each written target of a kind with ``records_write_time`` (a store
that reports write times but no values), so neither a slow sync nor a repair's later write is
taken for a change by someone else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from secretsapi.service.definition.model import Definition
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.state.identity import sync_identity
from secretsapi.service.state.lockfile import LockDocument, LockEntry, format_time, parse_time
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.base import ReadBack

if TYPE_CHECKING:
    from secretsapi.service.state.outcome import Written

PROVENANCE = "target_provenance"
HISTORY = 3  # records kept per target, as SecretZero keeps them
# The store's clock and ours may differ a little; a write this much later is not a change.
CLOCK_SKEW = timedelta(seconds=5)


def recorded_at(entry: LockEntry, target_ids: Iterable[str]) -> datetime:
    """When the lockfile says one of ``target_ids`` (ours, then SecretZero's) was last written."""
    times = [parse_time(entry.updated_at)]
    provenance = entry.extra.get(PROVENANCE)
    if isinstance(provenance, Mapping):
        for target_id in target_ids:
            records = provenance.get(target_id)
            for record in records if isinstance(records, list) else ():
                stamp = record.get("updated_at") if isinstance(record, Mapping) else None
                if not isinstance(stamp, str):
                    continue
                try:
                    times.append(parse_time(stamp))
                except ValueError:
                    continue  # a record we cannot read: the entry's time stands
    return max(times)


def changed_after(back: ReadBack, recorded: datetime) -> bool | None:
    """Whether the store was written after the lockfile's time; None when it keeps no time."""
    if back.updated_at is None:
        return None
    return back.updated_at > recorded + CLOCK_SKEW


def with_writes(extra: Mapping[str, Any], target_ids: Iterable[str], moment: datetime,
                actor: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``extra`` with a provenance record at ``moment`` by ``actor`` (this process's sync identity
    unless given) for each of ``target_ids``."""
    actor = sync_identity() if actor is None else actor
    provenance = extra.get(PROVENANCE)
    records: dict[str, Any] = dict(provenance) if isinstance(provenance, Mapping) else {}
    for target_id in target_ids:
        earlier = records.get(target_id)
        records[target_id] = [*(earlier if isinstance(earlier, list) else []),
                              {"updated_at": format_time(moment), "actor": dict(actor)}][-HISTORY:]
    return {**extra, PROVENANCE: records}


def stamped_writes(definition: Definition, written: Sequence[Written]) -> dict[str, list[str]]:
    """``{lock key: target ids}`` of the written targets whose kind ``records_write_time``."""
    ctx = TargetContext.of(definition)
    stamped: dict[str, list[str]] = {}
    for item in written:
        for unit in item.secret.units:
            if unit.lock_key != item.lock_key:
                continue
            for placement in unit.placements:
                try:
                    kind = get_kind(placement.target.type)
                except TargetError:
                    continue
                target_id = kind.target_id(placement.target, ctx)
                if kind.records_write_time and target_id in item.targets:
                    stamped.setdefault(item.lock_key, []).append(target_id)
    return stamped


def record_provenance(doc: LockDocument, definition: Definition, written: Sequence[Written],
                      moment: datetime) -> None:
    """A provenance record at ``moment`` for each written target, but those whose kind
    ``records_write_time``: ``record_write_times`` stamps them once the writes ended."""
    stamped = stamped_writes(definition, written)
    for item in written:
        later = set(stamped.get(item.lock_key, ()))
        target_ids = [target_id for target_id in item.targets if target_id not in later]
        if not target_ids:
            continue
        try:
            entry = doc.entry(item.lock_key, extra=False)
        except LockEntryCorrupted:
            continue
        if entry is None:
            continue
        records = with_writes({PROVENANCE: doc.raw_entry(item.lock_key).get(PROVENANCE)}, target_ids, moment)
        if not doc.extend_entry(item.lock_key, records):
            entry = doc.entry(item.lock_key)
            if entry is not None:
                doc.set_entry(item.lock_key, replace(entry, extra=with_writes(entry.extra, target_ids, moment)))


def record_write_times(doc: LockDocument, stamped: Mapping[str, Sequence[str]], moment: datetime) -> None:
    """A provenance record at ``moment`` in each entry for its ``stamped`` target ids."""
    for lock_key, target_ids in stamped.items():
        try:
            entry = doc.entry(lock_key)
        except LockEntryCorrupted:
            continue
        if entry is not None:
            doc.set_entry(lock_key, replace(entry, extra=with_writes(entry.extra, target_ids, moment)))
