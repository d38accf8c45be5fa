"""One write (a sync, a rotation, a repair), top to bottom: plan, lock, stage, store, commit.

A write checks that it can finish before it changes anything: it holds every lock it needs
(its targets' and the lockfile's) and has the new lockfile written to its temp file and
fsynced before the first target is touched. A lockfile that cannot be written (a full disk,
a read-only folder) then stops the write with no target changed. After the targets, the temp
file is rewritten with what was really written and renamed into place. Holding the locks
until that rename keeps a target and its lockfile entry in step: nobody else writes either
in between. The locks are checked before each batch of target writes and before the rename:
a write that lost one (its database session ended) stops there with LockLost.

Everything comes in as plain values: where the lockfiles are and how to lock them
(``Place``), the parsed definition, and what to write (a ``plans`` request, or the secrets
to repair). Nothing calls back up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath
from typing import Any

from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, LockfileUnwritable, LockLost
from secretsapi.service.results import OperationError
from secretsapi.service.state import locks
from secretsapi.service.state.entries import record, record_companions
from secretsapi.service.state.identity import sync_identity
from secretsapi.service.state.lock_state import LockfilePaths, StagedState, read_state, write_state
from secretsapi.service.state.lockfile import LockDocument, format_time
from secretsapi.service.state.lockfile_io import read_lockfile, write_lockfile
from secretsapi.service.state.locks import ExtraLock, Held
from secretsapi.service.state.plans import Plan, RotationRequest, SyncRequest, plan
from secretsapi.service.state.repair import RepairPlan, plan_repairs, record_repairs
from secretsapi.service.state.value_store import (
    StoreOutcome,
    after_writes,
    generate_values,
    rewrite,
    store,
    stripes_for,
    written_targets,
)
from secretsapi.service.state.write_only import record_provenance, record_write_times, stamped_writes
from secretsapi.service.targets import TargetContext
from secretsapi.service.util.progress import Progress

# SecretZero's manifest spec version, recorded in the block as SecretZero records it.
MANIFEST_SPEC_VERSION = "1"
# Our key in the ``secretfile`` block (SecretZero ignores unknown keys there, and drops them
# when it rewrites the file): the definition file hash every entry was last written from.
ENTRIES_HASH = "entries_definition_hash"


@dataclass(frozen=True)
class Place:
    """Where a write goes and how it locks: the workspace's settings, as plain values."""

    lockfiles: LockfilePaths
    lock_timeout: float  # seconds for all of a write's locks; negative: no limit
    # None: the file locks alone, enough when every writer shares this machine's filesystem.
    extra_lock: ExtraLock | None
    allow_scripts: bool
    clock: Callable[[], datetime]


def write(place: Place, definition: Definition, request: SyncRequest | RotationRequest,
          progress: Progress | None = None) -> tuple[Plan, StoreOutcome | None]:
    """Store what ``request`` asks for; the outcome is None when there was nothing to do.
    ``progress`` counts the secrets of the work: drawn, then the last once every target is written.

    The first plan, on an unlocked read, only says which targets to lock. Under their locks
    the lockfile is read again and planned again (another write may have just finished); if
    the plan now needs more targets, the locks are taken again, wider, so the loop ends.
    """
    planned = plan(read_state(place.lockfiles, definition), definition, request, place.clock())
    held: frozenset[int] = frozenset()
    while planned.work:
        held |= stripes_for(definition, planned.work)
        with target_locks(place, held) as stripes, write_lock(place) as lockfile:
            doc = read_state(place.lockfiles, definition, exact=True)
            planned = plan(doc, definition, request, place.clock())
            if planned.work and stripes_for(definition, planned.work) <= held:
                rotation = isinstance(request, RotationRequest)
                return planned, _store(place, definition, doc, planned.work, Held(stripes, lockfile),
                                       rotation=rotation, progress=progress)
    return planned, None


def _store(place: Place, definition: Definition, doc: LockDocument,
           work: Sequence[tuple[SecretDef, Sequence[Unit]]], held: Held, *, rotation: bool,
           progress: Progress | None = None) -> StoreOutcome:
    """Generate, stage the lockfile, write the targets, commit; the caller holds ``held``."""
    now = place.clock()
    values = generate_values(definition, doc, work, allow_scripts=place.allow_scripts, progress=progress)
    expected = values.expected()
    ahead = doc.fork()
    record(ahead, expected, now=now, rotation=rotation)
    record_provenance(ahead, definition, expected.written, now)
    record_definition(ahead, definition, now)
    try:
        staged = StagedState(place.lockfiles, ahead)
    except LockfileUnwritable as exc:
        raise type(exc)(f"{exc.message}; no target was changed") from None
    with staged:
        outcome = store(values, held)
        if progress is not None:
            progress(len(work), len(work))
        try:
            # Every target took the hash staged (the usual case): the staged file is already right,
            # unless targets whose stores report write times were written: when is known only now.
            stamped = stamped_writes(definition, outcome.written)
            if outcome.written != expected.written or stamped or outcome.companions:
                record(doc, outcome, now=now, rotation=rotation)
                record_companions(doc, outcome.companions)
                record_provenance(doc, definition, outcome.written, now)
                record_write_times(doc, stamped, place.clock())
                record_definition(doc, definition, now)
                staged.write(doc)
            held.check()
            staged.commit()
        except (LockfileUnwritable, LockLost) as exc:
            written = written_targets(outcome, partial_only=False, hide=definition.environment_hidden)
            raise after_writes(exc, written) from None
    return outcome


@dataclass(frozen=True)
class RepairOutcome:
    plan: RepairPlan  # the plan made under the target locks
    repaired: list[str]  # secrets with at least one target put back
    errors: list[OperationError]  # the plan's and the writes'


def repair(place: Place, definition: Definition, secrets: Sequence[SecretDef], *,
           overwrite: bool = True) -> RepairOutcome:
    """Put the recorded values of ``secrets`` back into their broken targets (``state.repair``),
    under the same locks as any write; without ``overwrite``, only into targets that do not hold
    another value (a plain sync completing its targets).

    The loop is ``write``'s: plan on an unlocked read to know the targets to lock, then plan
    again under their locks and write only when the locks held cover the plan. The lockfile
    lock is taken only for the commit, so a repair runs beside writes to other targets.
    """
    planned = plan_repairs(read_state(place.lockfiles, definition), secrets, TargetContext.of(definition),
                           overwrite=overwrite)
    held: frozenset[int] = frozenset()
    # Errors are confirmed under their targets' locks too: on the unlocked read, another write may
    # stand between its target writes and its lockfile commit (a new value beside the old record).
    while planned.repairs or planned.errors:
        held |= stripes_for(definition, _locked_work(planned, secrets))
        with target_locks(place, held) as stripes:
            doc = read_state(place.lockfiles, definition, exact=True)
            planned = plan_repairs(doc, secrets, TargetContext.of(definition), overwrite=overwrite)
            if not stripes_for(definition, _locked_work(planned, secrets)) <= held:
                continue  # the plan changed under the locks: take the wider set
            if not planned.repairs:
                return RepairOutcome(planned, [], list(planned.errors))
            written, errors, companions = rewrite(
                definition, doc, [(r.secret, r.unit, r.value) for r in planned.repairs], stripes)
            with write_lock(place) as lockfile:
                doc = read_state(place.lockfiles, definition, exact=True)
                recorded = record_repairs(doc, planned.repairs, written, now=place.clock())
                recorded = record_companions(doc, companions) or recorded
                if recorded or not _record_is_current(doc, definition):
                    record_definition(doc, definition, place.clock())
                    Held(stripes, lockfile).check()
                    write_state(place.lockfiles, doc)
            done = {r.secret.name for r in planned.repairs if written.get(r.unit.lock_key)}
            repaired = [name for name in planned.secrets if name in done]
            return RepairOutcome(planned, repaired, planned.errors + errors)
    return RepairOutcome(planned, [], list(planned.errors))


def _locked_work(planned: RepairPlan, secrets: Sequence[SecretDef]) -> list[tuple[SecretDef, Sequence[Unit]]]:
    """What a repair locks: the units it writes, and every unit of a secret it reports an error for."""
    erring = {error.secret for error in planned.errors}
    return [(item.secret, [item.unit]) for item in planned.repairs] + [
        (secret, secret.units) for secret in secrets if secret.name in erring]


def target_locks(place: Place, stripes: Iterable[int]) -> AbstractContextManager[Held]:
    """Held by a write from before it writes its targets until its lockfile commit is done."""
    return locks.stripe_locks(place.lockfiles.shared, stripes, timeout=place.lock_timeout, extra=place.extra_lock)


def write_lock(place: Place) -> AbstractContextManager[Held]:
    """Held around every read-modify-write of the lockfile, inside the target locks.

    The file lock serializes the writers of one machine (threads, workers, the CLI); the
    extra lock, entered inside it, the instances on other machines.
    """
    path = place.lockfiles.shared.absolute()
    extra = place.extra_lock(path, place.lock_timeout) if place.extra_lock is not None else None
    return locks.lockfile_lock(path, timeout=place.lock_timeout, extra=extra)


def record_definition_if_stale(place: Place, definition: Definition) -> bool:
    """Record the definition when the lockfile's record of it is missing or out of date.

    A sync with nothing to generate still records the definition, as SecretZero's does: a
    record naming other var files or another variables hash makes SecretZero's next sync
    treat every target as foreign and regenerate the secret. Returns whether it wrote.
    """
    if _record_is_current(read_lockfile(place.lockfiles.shared), definition):
        return False
    with write_lock(place) as lockfile:
        doc = read_lockfile(place.lockfiles.shared, exact=True)
        if _record_is_current(doc, definition):
            return False
        record_definition(doc, definition, place.clock())
        lockfile.check()
        write_lockfile(place.lockfiles.shared, doc)
    return True


def _record_is_current(doc: LockDocument, definition: Definition) -> bool:
    block = doc.secretfile
    return block is not None and all(block.get(key) == value for key, value in _record(definition).items())


def _record(definition: Definition) -> dict[str, Any]:
    """The fields SecretZero compares to decide whether the definition or its variables changed."""
    return {
        "filename": definition.path.name,
        "hash": definition.text_hash,
        "var_files": [PurePath(name).name for name in definition.var_files],
        "variables_hash": definition.variables_hash,
    }


def record_definition(doc: LockDocument, definition: Definition, now: datetime) -> None:
    """Record the definition file the lockfile now matches, on every write (SecretZero's record).

    SecretZero compares the file name, the var files' names and the variables hash with its
    own run's and regenerates on a difference, so the block always names the definition
    just used, even when some secret failed. Drift's ``definition_changed`` needs to know
    whether entries were written from this file; that is kept in ``ENTRIES_HASH``: the file
    hash once every secret's entry carries this definition's hash, else the hash recorded
    before (entries from other tools carry definition hashes we cannot recompute).
    """
    before = doc.secretfile
    doc.set_secretfile(
        filename=definition.path.name,
        text_hash=definition.text_hash,
        variables_hash=definition.variables_hash,
        var_files=[PurePath(name).name for name in definition.var_files],
        synced_at=format_time(now),
    )
    block: dict[str, Any] = doc.raw["secretfile"]
    block.setdefault("manifest_spec_version", MANIFEST_SPEC_VERSION)
    block["sync_identity"] = sync_identity()  # who last wrote the file, as SecretZero records it
    block[ENTRIES_HASH] = _entries_hash(doc, definition, before)


def _entries_hash(doc: LockDocument, definition: Definition, before: dict[str, Any] | None) -> str:
    if _entries_match(doc, definition):
        return definition.text_hash
    previous = (before or {}).get(ENTRIES_HASH, (before or {}).get("hash"))
    return previous if isinstance(previous, str) else ""


def _entries_match(doc: LockDocument, definition: Definition) -> bool:
    for secret in definition.secrets:
        for unit in secret.units:
            try:
                entry = doc.entry(unit.lock_key)
            except LockEntryCorrupted:
                return False
            if entry is None or entry.definition_hash != secret.definition_hash:
                return False
    return True
