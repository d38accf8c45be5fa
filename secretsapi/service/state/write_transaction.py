"""One write (a sync or a rotation): plan, lock the targets, store, commit the lockfile.

Writes to different targets run side by side: each holds the locks of its own targets for
the whole write, and the lockfile lock only while it merges its entries into the lockfile as
it is then and replaces it. Holding the target locks until the commit keeps a target and its
lockfile entry in step: nobody else writes either in between.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted
from secretsapi.service.results import OperationError
from secretsapi.service.state.lockfile import LockDocument, format_time
from secretsapi.service.state.lockfile_io import read_lockfile, write_lockfile
from secretsapi.service.state.value_store import StoreOutcome, record, store, stripes_for
from secretsapi.service.workspace import Workspace


@dataclass(frozen=True)
class Plan:
    work: list[tuple[SecretDef, Sequence[Unit]]]
    skipped: list[str]
    errors: list[OperationError]


Planner = Callable[[LockDocument], Plan]


def write(
    ws: Workspace, definition: Definition, planner: Planner, *, rotation: bool
) -> tuple[Plan, StoreOutcome | None]:
    """Run ``planner`` on the lockfile and store its work; None when there was nothing to do.

    The first plan, on an unlocked read, only says which targets to lock. Under their locks
    the lockfile is read again and planned again (another write may have just finished); if
    the plan now needs more targets, the locks are taken again, wider, so the loop ends.
    """
    plan = planner(read_lockfile(ws.lockfile_path))
    held: frozenset[int] = frozenset()
    while plan.work:
        held |= stripes_for(definition, plan.work)
        with ws.target_locks(held):
            doc = read_lockfile(ws.lockfile_path, exact=True)
            plan = planner(doc)
            if plan.work and stripes_for(definition, plan.work) <= held:
                outcome = store(definition, doc, plan.work, allow_scripts=ws.allow_scripts)
                _commit(ws, definition, outcome, rotation=rotation)
                return plan, outcome
    return plan, None


def _commit(ws: Workspace, definition: Definition, outcome: StoreOutcome, *, rotation: bool) -> None:
    with ws.write_lock():
        doc = read_lockfile(ws.lockfile_path, exact=True)
        record(doc, outcome, now=ws.now(), rotation=rotation)
        record_definition(doc, definition, ws)
        write_lockfile(ws.lockfile_path, doc)


def record_definition(doc: LockDocument, definition: Definition, ws: Workspace) -> None:
    """Record the definition file the lockfile now matches.

    Only once every secret's entry carries this definition's hash: until then the old file
    hash is what tells drift that definitions changed since entries were written (entries from
    other tools carry definition hashes we cannot recompute).
    """
    for secret in definition.secrets:
        for unit in secret.units:
            try:
                entry = doc.entry(unit.lock_key)
            except LockEntryCorrupted:
                return
            if entry is None or entry.definition_hash != secret.definition_hash:
                return
    doc.set_secretfile(
        filename=definition.path.name,
        text_hash=definition.text_hash,
        variables_hash=definition.variables_hash,
        var_files=list(definition.var_files),
        synced_at=format_time(ws.now()),
    )
