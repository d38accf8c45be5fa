"""One write (a sync with its repairs, a rotation), top to bottom: plan, lock, stage, store, commit.

A write checks that it can finish before it changes anything: it holds every lock it needs
(its targets' and the lockfile's) and has the new lockfile written to its temp file and
fsynced before the first target is touched. A lockfile that cannot be written (a full disk,
a read-only folder) then stops the write with no target changed. After the targets, the temp
file is rewritten with what was really written and renamed into place. Holding the locks
until that rename keeps a target and its lockfile entry in step: nobody else writes either
in between. The locks are checked before each batch of target writes and before the rename:
a write that lost one (its database session ended) stops there with LockLost.

Everything comes in as plain values: where the lockfiles are and how to lock them
(``Place``), the parsed definition, and what to write (a ``plans`` request; a sync also plans
its repairs and refresh, ``sync_write``). Nothing calls back up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import PurePath
from typing import Any

from secretsapi.service.credentials.lifecycle import phase as credential_phase
from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, LockfileUnwritable, LockLost, TargetError
from secretsapi.service.state import locks
from secretsapi.service.state.credentials import record_credentials
from secretsapi.service.state.entries import record, record_companions
from secretsapi.service.state.identity import sync_identity
from secretsapi.service.state.lock_state import LockfilePaths, StagedState, read_state
from secretsapi.service.state.lockfile import LockDocument, format_time
from secretsapi.service.state.locks import ExtraLock, Held
from secretsapi.service.state.outcome import StoreOutcome, after_writes, written_targets
from secretsapi.service.state.plans import Plan, RotationRequest, SyncRequest, plan, plan_sync
from secretsapi.service.state.refresh import drop_stale_targets
from secretsapi.service.state.rendered import move_rendered
from secretsapi.service.state.repair import Repair, RepairPlan, plan_repairs, record_repairs
from secretsapi.service.state.value_store import generate_values, store, stripes_for
from secretsapi.service.state.write_only import record_provenance, record_write_times, stamped_writes
from secretsapi.service.targets import TargetContext, get_kind
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
                cut_grace = isinstance(request, RotationRequest) and request.cut_grace
                return planned, _store(place, definition, doc, planned.work, Held(stripes, lockfile),
                                       rotation=rotation, progress=progress, cut_grace=cut_grace)
    return planned, None


def _store(place: Place, definition: Definition, doc: LockDocument,
           work: Sequence[tuple[SecretDef, Sequence[Unit]]], held: Held, *, rotation: bool,
           progress: Progress | None = None, repairs: Sequence[Repair] = (), cut_grace: bool = False) -> StoreOutcome:
    """Generate, stage the lockfile, write the targets (and ``repairs``'), commit; the caller
    holds ``held``. ``cut_grace``: see ``plans.RotationRequest``."""
    now = place.clock()
    known = {repair.unit.lock_key: repair.value for repair in repairs}
    values = generate_values(definition, doc, work, allow_scripts=place.allow_scripts, progress=progress,
                             known=known, now=now, cut_grace=cut_grace)
    expected = values.expected()
    ahead = doc.fork()
    record(ahead, expected, now=now, rotation=rotation)
    record_credentials(ahead, values.credentials, {item.lock_key for item in expected.written})
    record_provenance(ahead, definition, expected.written, now)
    record_repairs(ahead, repairs, _expected_repairs(repairs, TargetContext.of(definition)), now=now)
    move_rendered(ahead, definition)
    record_definition(ahead, definition, now)
    try:
        staged = StagedState(place.lockfiles, ahead)
    except LockfileUnwritable as exc:
        raise type(exc)(f"{exc.message}; no target was changed") from None
    with staged:
        outcome = store(values, held, [(r.secret, r.unit, r.value) for r in repairs])
        if progress is not None and work:
            progress(len(work), len(work))
        try:
            # Every target took the hash staged (the usual case): the staged file is already right,
            # unless targets whose stores report write times were written: when is known only now.
            stamped = stamped_writes(definition, outcome.written)
            if outcome.written != expected.written or stamped or outcome.companions or repairs:
                record(doc, outcome, now=now, rotation=rotation)
                record_credentials(doc, values.credentials, {item.lock_key for item in outcome.written})
                record_companions(doc, outcome.companions, place.clock())
                record_provenance(doc, definition, outcome.written, now)
                record_write_times(doc, stamped, place.clock())
                record_repairs(doc, repairs, outcome.repaired, now=place.clock())
                move_rendered(doc, definition)
                record_definition(doc, definition, now)
                staged.write(doc)
            held.check()
            for key, state in values.credentials.items():  # every target written; the commit makes it current
                credential_phase("commit", key, state.get("current"))
            staged.commit()
        except (LockfileUnwritable, LockLost) as exc:
            written = written_targets(outcome, partial_only=False, hide=definition.environment_hidden)
            raise after_writes(exc, written) from None
    return outcome


def _expected_repairs(repairs: Sequence[Repair], ctx: TargetContext) -> dict[str, dict[str, str]]:
    """What ``record_repairs`` will record if every repair is written: a hash of a written
    one's length (a template output's is known only once rendered)."""
    expected: dict[str, dict[str, str]] = {}
    for repair in repairs:
        hashes = expected.setdefault(repair.unit.lock_key, {})
        for placement in repair.unit.placements:
            with contextlib.suppress(TargetError):
                hashes[get_kind(placement.target.type).target_id(placement.target, ctx)] = repair.value_hash
    return expected


@dataclass(frozen=True)
class SyncPass:
    """A sync's plan, made under its locks, and what it stored (None when nothing was written)."""

    plan: Plan  # what to generate
    fixes: RepairPlan  # what to put back, and what cannot be
    refreshed: dict[str, list[str]]  # lock key -> recorded target ids dropped (``refresh``)
    outcome: StoreOutcome | None = None
    record_stale: bool = False  # the lockfile's record of the definition is missing or out of date

    @property
    def writes(self) -> bool:
        return bool(self.plan.work or self.fixes.repairs or self.refreshed or self.record_stale)

    @property
    def repaired(self) -> list[str]:
        """Secrets with at least one target put back."""
        done = self.outcome.repaired if self.outcome is not None else {}
        names = {repair.secret.name for repair in self.fixes.repairs if done.get(repair.unit.lock_key)}
        return [name for name in self.fixes.secrets if name in names]


def plan_pass(doc: LockDocument, definition: Definition, request: SyncRequest, *, repair: bool,
              refresh: bool) -> SyncPass:
    """What a sync will do on ``doc``: drop stale target ids (``refresh``, applied to ``doc``),
    generate what ``plan_sync`` says, and repair the other selected secrets (``state.repair``;
    only into targets that hold no other value unless ``repair``)."""
    refreshed = drop_stale_targets(doc, definition, request.secrets) if refresh else {}
    planned = plan_sync(doc, request)
    busy = {secret.name for secret, _ in planned.work} | {error.secret for error in planned.errors}
    fixes = plan_repairs(doc, [s for s in request.secrets if s.name not in busy], TargetContext.of(definition),
                         overwrite=repair)
    return SyncPass(planned, fixes, refreshed, record_stale=not _record_is_current(doc, definition))


def sync_write(place: Place, definition: Definition, request: SyncRequest, *, repair: bool = False,
               refresh: bool = False, progress: Progress | None = None) -> SyncPass:
    """One sync in one pass: plan, lock once, write and repair, commit once.

    The first plan, on an unlocked read, says which targets to lock: those of the secrets it
    generates, repairs, or reports a target of (an error is confirmed under its targets' locks:
    on the unlocked read, another write may stand between its target writes and its commit).
    Under those locks and the lockfile lock the lockfile is read and planned again; if the plan
    now needs more targets, the locks are taken again, wider, so the loop ends. Nothing to
    write and nothing to confirm: no lock at all.
    """
    planned = plan_pass(read_state(place.lockfiles, definition), definition, request, repair=repair, refresh=refresh)
    held: frozenset[int] = frozenset()
    while planned.writes or planned.fixes.errors:
        held |= stripes_for(definition, _locked_work(planned, request.secrets))
        with target_locks(place, held) as stripes, write_lock(place) as lockfile:
            doc = read_state(place.lockfiles, definition, exact=True)
            planned = plan_pass(doc, definition, request, repair=repair, refresh=refresh)
            if not stripes_for(definition, _locked_work(planned, request.secrets)) <= held:
                continue  # the plan changed under the locks: take the wider set
            if not planned.writes:
                return planned
            outcome = _store(place, definition, doc, planned.plan.work, Held(stripes, lockfile), rotation=False,
                             progress=progress, repairs=planned.fixes.repairs)
            return replace(planned, outcome=outcome)
    return planned


def _locked_work(planned: SyncPass, secrets: Sequence[SecretDef]) -> list[tuple[SecretDef, Sequence[Unit]]]:
    """What a sync locks: the units it generates or writes, and every unit of a secret it
    reports an error for."""
    erring = {error.secret for error in planned.fixes.errors}
    return [*planned.plan.work, *((item.secret, [item.unit]) for item in planned.fixes.repairs),
            *((secret, secret.units) for secret in secrets if secret.name in erring)]


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
                entry = doc.entry(unit.lock_key, extra=False)  # its other keys are not compared
            except LockEntryCorrupted:
                return False
            if entry is None or entry.definition_hash != secret.definition_hash:
                return False
    return True
