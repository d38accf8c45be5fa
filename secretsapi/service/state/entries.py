"""What a write records in the lockfile's entries: new values (``record``) and the hashes of
targets rewritten beside them (``record_companions``), into the document the caller commits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from secretsapi.service.errors import LockEntryCorrupted
from secretsapi.service.state.lockfile import LockDocument, LockEntry, format_time
from secretsapi.service.state.outcome import StoreOutcome, Written
from secretsapi.service.state.write_only import with_writes


def record(doc: LockDocument, outcome: StoreOutcome, *, now: datetime, rotation: bool) -> None:
    """Put ``outcome``'s entries into ``doc``, each over the entry ``doc`` holds now.

    ``rotation`` decides the metadata: a rotation sets ``last_rotated`` and counts one more
    rotation (rule 1); a sync keeps both (rule 2).
    """
    stamp = format_time(now)
    for item in outcome.written:
        doc.set_entry(item.lock_key, _entry(doc, item, stamp, rotation))


def record_companions(doc: LockDocument, companions: Sequence[Written], moment: datetime) -> bool:
    """Put the hashes the companions' targets now hold into their entries, each with a provenance
    record at ``moment`` (a template output rendered again was written for each of its units);
    the value and its times stay.

    An entry whose value changed since (a concurrent forced sync) is left as it is. Returns
    whether any entry changed.
    """
    changed = False
    for item in companions:
        try:
            entry = doc.entry(item.lock_key)
        except LockEntryCorrupted:
            continue
        if entry is None or entry.hash != item.value_hash:
            continue
        targets = {**entry.targets, **item.targets}
        doc.set_entry(item.lock_key, replace(entry, targets=targets,
                                             extra=with_writes(entry.extra, item.targets, moment)))
        changed = True
    return changed


def _entry(doc: LockDocument, item: Written, stamp: str, rotation: bool) -> LockEntry:
    try:
        old = doc.entry(item.lock_key)
    except LockEntryCorrupted:
        old = None  # only a forced operation gets here; the corrupted entry is replaced
    value_hash, hashes = item.value_hash, item.targets
    if old is None:
        return LockEntry(
            hash=value_hash, created_at=stamp, updated_at=stamp,
            last_rotated=stamp if rotation else None, rotation_count=1 if rotation else 0,
            definition_hash=item.secret.definition_hash, targets=hashes, extra={},
        )
    return LockEntry(
        hash=value_hash, created_at=old.created_at, updated_at=stamp,
        last_rotated=stamp if rotation else old.last_rotated,
        rotation_count=old.rotation_count + 1 if rotation else old.rotation_count,
        definition_hash=item.secret.definition_hash, targets=hashes, extra=old.extra,
    )
