"""One write (a sync or a rotation): plan, lock, stage the lockfile, store, commit the lockfile.

A write checks that it can finish before it changes anything: it holds every lock it needs
(its targets' and the lockfile's) and has the new lockfile written to its temp file and
fsynced before the first target is touched. A lockfile that cannot be written (a full disk,
a read-only folder) then stops the write with no target changed. After the targets, the temp
file is rewritten with what was really written and renamed into place. Holding the locks
until that rename keeps a target and its lockfile entry in step: nobody else writes either
in between.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath
from typing import Any

from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted, LockfileUnwritable
from secretsapi.service.progress import Progress
from secretsapi.service.results import OperationError
from secretsapi.service.state.lock_state import StagedState, read_state, write_state
from secretsapi.service.state.lockfile import LockDocument, format_time
from secretsapi.service.state.lockfile_io import read_lockfile, write_lockfile
from secretsapi.service.state.repair import RepairPlan, record_repairs
from secretsapi.service.state.value_store import StoreOutcome, record, rewrite, store, stripes_for, written_targets
from secretsapi.service.workspace import Workspace


@dataclass(frozen=True)
class Plan:
    work: list[tuple[SecretDef, Sequence[Unit]]]
    skipped: list[str]
    errors: list[OperationError]


Planner = Callable[[LockDocument], Plan]

# SecretZero's manifest spec version, recorded in the block as SecretZero records it.
MANIFEST_SPEC_VERSION = "1"
# Our key in the ``secretfile`` block (SecretZero ignores unknown keys there, and drops them
# when it rewrites the file): the definition file hash every entry was last written from.
ENTRIES_HASH = "entries_definition_hash"


def write(
    ws: Workspace, definition: Definition, planner: Planner, *, rotation: bool, progress: Progress | None = None
) -> tuple[Plan, StoreOutcome | None]:
    """Run ``planner`` on the lockfile and store its work; None when there was nothing to do.

    The first plan, on an unlocked read, only says which targets to lock. Under their locks
    the lockfile is read again and planned again (another write may have just finished); if
    the plan now needs more targets, the locks are taken again, wider, so the loop ends.
    """
    plan = planner(read_state(ws, definition))
    held: frozenset[int] = frozenset()
    while plan.work:
        held |= stripes_for(definition, plan.work)
        with ws.target_locks(held), ws.write_lock():
            doc = read_state(ws, definition, exact=True)
            plan = planner(doc)
            if plan.work and stripes_for(definition, plan.work) <= held:
                return plan, _store(ws, definition, doc, plan.work, rotation=rotation, progress=progress)
    return plan, None


@dataclass(frozen=True)
class RepairOutcome:
    plan: RepairPlan  # the plan made under the target locks
    repaired: list[str]  # secrets with at least one target put back
    errors: list[OperationError]  # the plan's and the writes'


def repair(ws: Workspace, definition: Definition, planner: Callable[[LockDocument], RepairPlan]) -> RepairOutcome:
    """Put recorded values back into broken targets, under the same locks as any write.

    The loop is ``write``'s: plan on an unlocked read to know the targets to lock, then plan
    again under their locks and write only when the locks held cover the plan.
    """
    plan = planner(read_state(ws, definition))
    held: frozenset[int] = frozenset()
    while plan.repairs:
        work = [(item.secret, [item.unit]) for item in plan.repairs]
        held |= stripes_for(definition, work)
        with ws.target_locks(held):
            doc = read_state(ws, definition, exact=True)
            plan = planner(doc)
            work = [(item.secret, [item.unit]) for item in plan.repairs]
            if plan.repairs and stripes_for(definition, work) <= held:
                written, errors = rewrite(definition, doc, [(r.secret, r.unit, r.value) for r in plan.repairs])
                with ws.write_lock():
                    doc = read_state(ws, definition, exact=True)
                    if record_repairs(doc, plan.repairs, written) or not _record_is_current(doc, definition):
                        record_definition(doc, definition, ws)
                        write_state(ws, doc)
                done = {r.secret.name for r in plan.repairs if written.get(r.unit.lock_key)}
                repaired = [name for name in plan.secrets if name in done]
                return RepairOutcome(plan, repaired, plan.errors + errors)
    return RepairOutcome(plan, [], list(plan.errors))


# Units named in the audit facts of a lockfile that failed after its targets were written.
WRITTEN_LISTED = 100


def _store(ws: Workspace, definition: Definition, doc: LockDocument, work: Sequence[tuple[SecretDef, Sequence[Unit]]],
           *, rotation: bool, progress: Progress | None = None) -> StoreOutcome:
    """Store ``work`` and commit ``doc`` with its entries; the caller holds every lock."""
    now = ws.now()
    staged: list[StagedState] = []
    expected: list[StoreOutcome] = []

    def stage(outcome: StoreOutcome) -> None:
        ahead = doc.fork()
        record(ahead, outcome, now=now, rotation=rotation)
        record_definition(ahead, definition, ws, now=now)
        try:
            staged.append(StagedState(ws, ahead))
        except LockfileUnwritable as exc:
            raise type(exc)(f"{exc.message}; no target was changed") from None
        expected.append(outcome)

    try:
        outcome = store(definition, doc, work, allow_scripts=ws.allow_scripts, before_writes=stage, progress=progress)
        try:
            # Every target took the hash staged (the usual case): the staged file is already right.
            if outcome.written != expected[0].written:
                record(doc, outcome, now=now, rotation=rotation)
                record_definition(doc, definition, ws, now=now)
                staged[0].write(doc)
            staged[0].commit()
        except LockfileUnwritable as exc:
            raise _after_writes(exc, outcome, definition) from None
    finally:
        for files in staged:
            files.close()
    return outcome


def _after_writes(exc: LockfileUnwritable, outcome: StoreOutcome, definition: Definition) -> LockfileUnwritable:
    """The lockfile failed after targets took new values: say so, and which (in the details)."""
    written = written_targets(outcome, partial_only=False, hide=definition.environment_hidden)
    targets = sum(len(ids) for ids in written.values())
    details: dict[str, object] = {"written_targets": dict(list(written.items())[:WRITTEN_LISTED])}
    if len(written) > WRITTEN_LISTED:
        details["written_targets_not_listed"] = len(written) - WRITTEN_LISTED
    return type(exc)(f"{exc.message}; {targets} target(s) now hold new values the lockfile does not "
                     "record (the audit row lists them)", details)


def record_definition_if_stale(ws: Workspace, definition: Definition) -> bool:
    """Record the definition when the lockfile's record of it is missing or out of date.

    A sync with nothing to generate still records the definition, as SecretZero's does: a
    record naming other var files or another variables hash makes SecretZero's next sync
    treat every target as foreign and regenerate the secret. Returns whether it wrote.
    """
    if _record_is_current(read_lockfile(ws.lockfile_path), definition):
        return False
    with ws.write_lock():
        doc = read_lockfile(ws.lockfile_path, exact=True)
        if _record_is_current(doc, definition):
            return False
        record_definition(doc, definition, ws)
        write_lockfile(ws.lockfile_path, doc)
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


def record_definition(doc: LockDocument, definition: Definition, ws: Workspace, *,
                      now: datetime | None = None) -> None:
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
        synced_at=format_time(now or ws.now()),
    )
    block: dict[str, Any] = doc.raw["secretfile"]
    block.setdefault("manifest_spec_version", MANIFEST_SPEC_VERSION)
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
