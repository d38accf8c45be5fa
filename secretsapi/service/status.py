"""Read-only views of the definition and the lockfile: the secret list and one secret's status."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime, timedelta

from secretsapi.service.definition.model import Definition, SecretDef
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound, SecretNotDefined
from secretsapi.service.results import SecretStatus, SecretSummary
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.lockfile import LockDocument, LockEntry, format_time, parse_time
from secretsapi.service.state.lockfile_io import read_lockfile
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

    The definition and the lockfile pair are read once for all of them, so the whole list costs
    O(secrets): reading the state once per secret made 20,000 statuses quadratic (the local keys
    are a pass over the definition).
    """
    definition: Definition | None = None
    if names is None:  # the declared secrets: the definition must load
        definition = ws.definition()
        names = [s.name for s in definition.secrets]
    else:
        with contextlib.suppress(DefinitionNotFound, DefinitionInvalid):
            definition = ws.definition()
    doc = read_state(ws.lockfiles, definition) if definition is not None else read_lockfile(ws.lockfile_path)
    return [_status(doc, definition, name) for name in names]


def _status(doc: LockDocument, definition: Definition | None, name: str) -> SecretStatus:
    lock_keys = [name]
    declared: SecretDef | None = None
    if definition is not None:
        with contextlib.suppress(SecretNotDefined):
            declared = definition.secret(name)
            lock_keys = [unit.lock_key for unit in declared.units]
    entries: list[LockEntry] = []
    for key in lock_keys:
        # A corrupted entry raises: the status cannot be read. Its other keys are not shown.
        entry = doc.entry(key, extra=False)
        if entry is None:
            return SecretStatus(name=name, exists=False)
        entries.append(entry)
    rotated = [e.last_rotated for e in entries if e.last_rotated]
    targets: dict[str, None] = {}
    for entry in entries:
        targets.update(dict.fromkeys(entry.targets))
    due = _due(declared, entries)
    return SecretStatus(
        name=name,
        exists=True,
        created_at=min(e.created_at for e in entries),
        updated_at=max(e.updated_at for e in entries),
        last_rotated=max(rotated) if rotated else None,
        rotation_count=max(e.rotation_count for e in entries),
        targets=list(targets),
        due_at=format_time(due) if due is not None else None,
    )


def _due(secret: SecretDef | None, entries: list[LockEntry]) -> datetime | None:
    """``state.due.due_time`` from the entries already read: parsing each entry a second time was
    a third of a bulk status."""
    if secret is None or secret.one_time or secret.rotation_days is None:
        return None
    return min(parse_time(e.last_rotated or e.created_at) for e in entries) + timedelta(days=secret.rotation_days)
