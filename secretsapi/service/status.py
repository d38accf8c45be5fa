"""Read-only views of the definition and the lockfile: the secret list and one secret's status."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import timedelta

from secretsapi.service.definition.model import Definition, SecretDef
from secretsapi.service.definition.status_plan import PlannedSecret, StatusPlan
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound
from secretsapi.service.results import SecretStatus, SecretSummary
from secretsapi.service.state.lockfile import format_time, parse_time
from secretsapi.service.state.status_index import EMPTY, Entries, IndexedEntry, index_lockfile, read_entries
from secretsapi.service.util.last_result import LastResult
from secretsapi.service.workspace import Workspace

# The summaries of the last definition listed: load_definition returns the same object until
# the file (or anything it depends on) changes.
_summaries: LastResult[Definition, tuple[SecretSummary, ...]] = LastResult()


def list_secrets(ws: Workspace) -> Sequence[SecretSummary]:
    """The declared secrets in definition order.

    The result is shared between callers while the definition is unchanged (the same tuple,
    so interfaces may cache what they derive from it by identity): treat it as read-only.
    """
    return _summaries.get(ws.definition(), _summarize)


def _summarize(definition: Definition) -> tuple[SecretSummary, ...]:
    return tuple(summary(s) for s in definition.secrets)


def summary(secret: SecretDef) -> SecretSummary:
    return SecretSummary(secret.name, secret.kind, secret.rotation_period, declared_targets(secret),
                         secret.one_time, secret.description)


def declared_targets(secret: SecretDef) -> list[str]:
    """SecretZero's listing (``secretzero list``, ``show``): ``<provider>/<kind>`` as written, one per
    entry of the secret's own ``targets:``, in order, repeats included (a template's are not)."""
    return [f"{t.provider}/{t.kind}" for t in secret.targets]


def secret_status(ws: Workspace, name: str) -> SecretStatus:
    """Status from the lockfile. An unknown or not generated secret is ``exists: False``.

    The definition is consulted only to find a template secret's fields; the status still
    answers when the definition is missing or invalid, since the lockfile alone records state.
    """
    return secret_statuses(ws, [name])[0]


def secret_statuses(ws: Workspace, names: Sequence[str] | None = None) -> list[SecretStatus]:
    """``secret_status`` of each of ``names`` (default: every declared secret, in definition order).

    What the definition says of the secrets (``Workspace.status_plan``) and the lockfile pair's
    entries (``state.status_index``) are each read once for all of them, and from what other
    processes stored when they can be, so 20,000 statuses cost one pass over 20,000 small tuples
    rather than rebuilding the definition and parsing the lockfile's JSON.
    """
    plan: StatusPlan | None = None
    if names is None:  # the declared secrets: the definition must load
        plan = ws.status_plan()
        names = [s.name for s in plan.secrets]
    else:
        with contextlib.suppress(DefinitionNotFound, DefinitionInvalid):
            plan = ws.status_plan()
    if plan is None:
        entries = _Pair(read_entries(ws.lockfile_path, None), EMPTY, frozenset())
    else:
        paths, store = ws.status_lockfiles(plan), ws.definition_store if plan.shareable else None
        local = read_entries(paths.local, store) if plan.local_keys else EMPTY
        entries = _Pair(read_entries(paths.shared, store), local, plan.local_keys)
    return [_status(entries, plan.get(name) if plan is not None else None, name) for name in names]


def index_lockfiles(ws: Workspace) -> None:
    """Store the status index of the lockfile pair this process last wrote (``state.status_index``),
    unless stored already: after a write, so the status another process runs next reads the
    index rather than the JSON. Without a store, or when the
    definition took values from the environment (the lockfile may hold them), nothing."""
    if ws.definition_store is not None and ws.status_plan().shareable:
        paths = ws.lockfiles
        for path in (paths.shared, paths.local):
            index_lockfile(path, ws.definition_store)


class _Pair:
    """The lockfile pair as ``lock_state.SplitLockDocument`` reads it: a local secret's entry from
    the machine-local file when it is there, else from the shared one."""

    def __init__(self, shared: Entries, local: Entries, local_keys: frozenset[str]) -> None:
        self._shared, self._local, self._local_keys = shared, local, local_keys

    def entry(self, key: str) -> IndexedEntry | None:
        if key in self._local_keys and key in self._local:
            return self._local.entry(key)
        return self._shared.entry(key)


def _status(pair: _Pair, declared: PlannedSecret | None, name: str) -> SecretStatus:
    entries: list[IndexedEntry] = []
    for key in declared.lock_keys if declared is not None else (name,):
        # A corrupted entry raises: the status cannot be read. Its other keys are not shown.
        entry = pair.entry(key)
        if entry is None:
            return SecretStatus(name=name, exists=False)
        entries.append(entry)
    first = entries[0]
    if len(entries) == 1:  # nearly every secret: no merging
        return SecretStatus(
            name=name, exists=True, created_at=first.created_at, updated_at=first.updated_at,
            last_rotated=first.last_rotated, rotation_count=first.rotation_count, targets=list(first.targets),
            due_at=_due(declared, entries), last_change=first.change,
        )
    rotated = [e.last_rotated for e in entries if e.last_rotated]
    latest = max(entries, key=lambda e: parse_time(e.updated_at))
    return SecretStatus(
        name=name,
        exists=True,
        created_at=min(e.created_at for e in entries),
        updated_at=max(e.updated_at for e in entries),
        last_rotated=max(rotated) if rotated else None,
        rotation_count=max(e.rotation_count for e in entries),
        targets=list(dict.fromkeys(target for e in entries for target in e.targets)),
        due_at=_due(declared, entries),
        last_change=latest.change,
    )


def _due(secret: PlannedSecret | None, entries: list[IndexedEntry]) -> str | None:
    """``state.due.due_time`` from the entries already read: parsing each entry a second time was
    a third of a bulk status."""
    if secret is None or secret.due_days is None:
        return None
    if len(entries) == 1:
        base = parse_time(entries[0].last_rotated or entries[0].created_at)
    else:
        base = min(parse_time(e.last_rotated or e.created_at) for e in entries)
    return format_time(base + timedelta(days=secret.due_days))
