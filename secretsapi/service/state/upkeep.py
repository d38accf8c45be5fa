"""SecretZero's lockfile upkeep: ``clean`` (entries of secrets no longer defined) and ``import``
(record the values targets already hold, generating nothing); ``refresh`` (target ids a
definition no longer names) is ``state.refresh``, which a sync and an import apply.

Each changes the lockfile under the lockfile lock every write takes; ``import`` also holds its
targets' locks while it reads them, so it never records a value a sync is replacing, and renders
again the template outputs of the values it records anew, in the same commit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, TargetError
from secretsapi.service.results import CleanResult, ImportResult, ImportRow, OperationError
from secretsapi.service.state import changes, write
from secretsapi.service.state.changes import with_change
from secretsapi.service.state.entries import record_companions
from secretsapi.service.state.identity import sync_identity
from secretsapi.service.state.lock_state import read_state, write_state
from secretsapi.service.state.lockfile import LockDocument, LockEntry, format_time
from secretsapi.service.state.lockfile_io import read_lockfile, write_lockfile
from secretsapi.service.state.locks import Held
from secretsapi.service.state.refresh import drop_stale_targets, stale_targets
from secretsapi.service.state.rendered import is_template, move_rendered
from secretsapi.service.state.repair import Repair, record_repairs
from secretsapi.service.state.value_store import rewrite, stripes_for
from secretsapi.service.state.write_only import with_writes
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.base import check_value_source
from secretsapi.service.util.hashing import sha256_text

# How SecretZero's ``import`` marks the provenance of a value read from a target.
IMPORT_ACTOR = {"operation": "lockfile_import", "source": "target"}


def clean_lockfile(place: write.Place, definition: Definition, *, dry_run: bool = False) -> CleanResult:
    """Remove the shared lockfile's entries no secret of the definition owns (SecretZero's
    ``clean``: a template secret owns ``<secret>.<field>``). The machine-local lockfile is
    left alone, as SecretZero leaves it."""
    removed = _orphans(read_lockfile(place.lockfiles.shared), definition)
    if removed and not dry_run:
        with write.write_lock(place) as lockfile:
            doc = read_lockfile(place.lockfiles.shared, exact=True)
            removed = _orphans(doc, definition)
            for key in removed:
                doc.remove_entry(key)
            if removed:
                lockfile.check()
                write_lockfile(place.lockfiles.shared, doc)
    verb = "would be removed" if dry_run else "removed"
    message = (f"{len(removed)} orphaned lockfile entr{'y' if len(removed) == 1 else 'ies'} {verb}."
               if removed else "No orphaned lockfile entries found.")
    return CleanResult(removed, dry_run, message)


def _orphans(doc: LockDocument, definition: Definition) -> list[str]:
    owned = {unit.lock_key for secret in definition.secrets for unit in secret.units}
    recorded = doc.keys()
    return [key for key in recorded if key not in owned]


def import_values(place: write.Place, definition: Definition, selected: Sequence[SecretDef], *,
                  dry_run: bool = False) -> ImportResult:
    """SecretZero's ``import``: record the hash of the value a unit's targets already hold.

    Nothing is generated. The targets that hold a value must agree (else the unit is an error);
    templates and write-only targets (which give no value back) are passed over. Stale target
    ids are dropped first, as SecretZero's import does. A template output that renders a unit
    whose recorded value changed is rendered again with the value imported (``state.rendered``),
    in the same commit.
    """
    work = [(secret, secret.units) for secret in selected]
    with write.target_locks(place, stripes_for(definition, work)) as stripes:
        found = [(secret, unit, *_held_value(unit, TargetContext.of(definition)))
                 for secret in selected for unit in secret.units]
        with write.write_lock(place) as lockfile:
            doc = read_state(place.lockfiles, definition, exact=True)
            refreshed = (stale_targets if dry_run else drop_stale_targets)(doc, definition, selected)
            now = place.clock()
            rows = [_import(doc, secret, unit, value, matched, problem, now, dry_run=dry_run)
                    for secret, unit, value, matched, problem in found]
            errors = [OperationError(row.secret, None, row.detail) for row in rows if row.status == "error"]
            if not dry_run and (refreshed or any(row.status in {"imported", "updated", "unchanged"} for row in rows)):
                changed = [(secret, unit, value) for (secret, unit, value, _, _), row in zip(found, rows, strict=True)
                           if row.status in {"imported", "updated"} and value is not None]
                errors += _render_templates(definition, doc, changed, Held(stripes, lockfile), place.clock)
                write.record_definition(doc, definition, now)
                lockfile.check()
                write_state(place.lockfiles, doc)
    return ImportResult(rows, errors, dry_run, _import_message(rows, dry_run), refreshed)


def _render_templates(definition: Definition, doc: LockDocument, changed: Sequence[tuple[SecretDef, Unit, str]],
                      held: Held, clock: Callable[[], datetime]) -> list[OperationError]:
    """Render the template outputs of the units whose value ``import`` changed again, with the
    values imported, and record them under every unit placed in them."""
    repairs = []
    for secret, unit, value in changed:
        outputs = tuple(p for p in unit.placements if is_template(p))
        if outputs:
            repairs.append(Repair(secret, Unit(unit.lock_key, unit.generator, outputs), sha256_text(value), value))
    if not repairs:
        return []
    written, errors, companions = rewrite(definition, doc, [(r.secret, r.unit, r.value) for r in repairs], held)
    moment = clock()
    record_repairs(doc, repairs, written, now=moment)
    record_companions(doc, companions, moment)
    move_rendered(doc, definition)
    return errors


def _held_value(unit: Unit, ctx: TargetContext) -> tuple[str | None, list[str], str]:
    """The value ``unit``'s readable targets hold, the ids of the targets holding it, and a
    problem ("" when none): targets holding different values, or none holding one (a target the
    operator's rule keeps from being read with the server's credentials says so: an error)."""
    value: str | None = None
    matched: list[str] = []
    refused = ""
    for placement in unit.placements:
        try:
            kind = get_kind(placement.target.type)
            if kind.type == "local/template":
                continue
            check_value_source(kind, placement.target, ctx)
        except TargetError as exc:
            refused = refused or exc.message
            continue
        try:
            back = kind.read([placement], ctx)[placement.key]
            target_id = kind.target_id(placement.target, ctx)
        except TargetError:
            continue  # unreadable here: another target may still hold the value
        if not back.present or back.value is None:
            continue
        if value is not None and back.value != value:
            return None, [], "target_value_mismatch: its targets hold different values"
        value = back.value
        matched.append(target_id)
    if value is None and refused:
        return None, [], f"{REFUSED}: {refused}"
    return value, matched, "" if value is not None else "not_retrievable"


def _import(doc: LockDocument, secret: SecretDef, unit: Unit, value: str | None, matched: list[str],
            problem: str, now: datetime, *, dry_run: bool) -> ImportRow:
    if problem.startswith(("target_value_mismatch", REFUSED)):
        return ImportRow(secret.name, unit.lock_key, "error", problem)
    if value is None:
        return ImportRow(secret.name, unit.lock_key, "skipped", problem)
    value_hash = sha256_text(value)
    try:
        entry = doc.entry(unit.lock_key)
    except LockEntryCorrupted:
        entry = None  # replaced by what the targets hold: that is what import is for
    current = (entry is not None and entry.hash == value_hash
               and all(entry.targets.get(target_id) == value_hash for target_id in matched))
    status = "unchanged" if current else "imported" if entry is None else "updated"
    if dry_run:
        return ImportRow(secret.name, unit.lock_key, status if current else _WOULD[status],
                         f"targets={len(matched)}")
    stamp = format_time(now)
    hashes = dict.fromkeys(matched, value_hash)
    if entry is None:
        entry = LockEntry(hash=value_hash, created_at=stamp, updated_at=stamp, last_rotated=None, rotation_count=0,
                          definition_hash=secret.definition_hash, targets=hashes,
                          extra=with_change({}, changes.IMPORTED, stamp))
    elif current:
        entry = replace(entry, definition_hash=secret.definition_hash)
    else:
        entry = replace(entry, hash=value_hash, updated_at=stamp, definition_hash=secret.definition_hash,
                        targets={**entry.targets, **hashes}, extra=with_change(entry.extra, changes.IMPORTED, stamp))
    actor = {**sync_identity(), **IMPORT_ACTOR}
    doc.set_entry(unit.lock_key, replace(entry, extra=with_writes(entry.extra, matched, now, actor)))
    return ImportRow(secret.name, unit.lock_key, status, f"targets={len(matched)}")


REFUSED = "read_refused"
_WOULD = {"imported": "would_import", "updated": "would_update"}


def _import_message(rows: Sequence[ImportRow], dry_run: bool) -> str:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    order = ("would_import", "would_update", "imported", "updated", "unchanged", "skipped", "error")
    parts = [f"{counts[status]} {status.replace('_', ' ')}" for status in order if counts.get(status)]
    return ("Dry run: " if dry_run else "Import: ") + (", ".join(parts) or "nothing to import") + "."
