"""SecretZero's ``refresh``: the recorded target ids a definition no longer names (a target was
renamed or removed), found and dropped from a lockfile document, with their provenance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.state.lockfile import LockDocument, LockEntry
from secretsapi.service.state.write_only import PROVENANCE
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.secretzero_ids import aliases


def stale_targets(doc: LockDocument, definition: Definition,
                  secrets: Sequence[SecretDef]) -> dict[str, list[str]]:
    """Lock key -> the recorded target ids no target of its unit has now, ours or SecretZero's
    (``refresh_lockfile_targets``)."""
    ctx = TargetContext.of(definition)
    stale: dict[str, list[str]] = {}
    for secret in secrets:
        for unit in secret.units:
            try:
                entry = doc.entry(unit.lock_key)
            except LockEntryCorrupted:
                continue
            if entry is None or not entry.targets:
                continue
            valid = _target_ids(unit, ctx)
            gone = sorted(target_id for target_id in entry.targets if target_id not in valid)
            if gone:
                stale[unit.lock_key] = gone
    return stale


def _target_ids(unit: Unit, ctx: TargetContext) -> set[str]:
    valid: set[str] = set()
    for placement in unit.placements:
        valid.update(aliases(placement.target, ctx))
        try:
            valid.add(get_kind(placement.target.type).target_id(placement.target, ctx))
        except TargetError:
            continue
    return valid


def drop_stale_targets(doc: LockDocument, definition: Definition,
                       secrets: Sequence[SecretDef]) -> dict[str, list[str]]:
    """Drop the stale target ids of ``secrets``' entries (``stale_targets``) from ``doc``; returns them."""
    stale = stale_targets(doc, definition, secrets)
    for lock_key, gone in stale.items():
        entry = doc.entry(lock_key)
        if entry is not None:
            doc.set_entry(lock_key, _without(entry, gone))
    return stale


def _without(entry: LockEntry, gone: Sequence[str]) -> LockEntry:
    targets = {key: value for key, value in entry.targets.items() if key not in gone}
    extra = dict(entry.extra)
    provenance = extra.get(PROVENANCE)
    if isinstance(provenance, dict):
        extra[PROVENANCE] = {key: value for key, value in provenance.items() if key not in gone}
    return replace(entry, targets=targets, extra=extra)
