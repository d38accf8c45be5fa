"""Read-only views of the definition and the lockfile: the secret list and one secret's status."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from secretsapi.service.definition.model import Definition, SecretDef
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound, SecretNotDefined
from secretsapi.service.results import SecretStatus, SecretSummary
from secretsapi.service.state.due import due_time
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.lockfile import LockEntry, format_time
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
    definition: Definition | None = None
    with contextlib.suppress(DefinitionNotFound, DefinitionInvalid):
        definition = ws.definition()
    lock_keys = [name]
    declared: SecretDef | None = None
    if definition is not None:
        with contextlib.suppress(SecretNotDefined):
            declared = definition.secret(name)
            lock_keys = [unit.lock_key for unit in declared.units]
    doc = read_state(ws.lockfiles, definition) if definition is not None else read_lockfile(ws.lockfile_path)
    entries: list[LockEntry] = []
    for key in lock_keys:
        entry = doc.entry(key)  # a corrupted entry raises: the status cannot be read
        if entry is None:
            return SecretStatus(name=name, exists=False)
        entries.append(entry)
    rotated = [e.last_rotated for e in entries if e.last_rotated]
    targets: dict[str, None] = {}
    for entry in entries:
        targets.update(dict.fromkeys(entry.targets))
    due = due_time(doc, declared) if declared is not None else None
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
