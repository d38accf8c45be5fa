"""Sync: generate the secrets that do not exist yet (or all, forced) and store them."""

from __future__ import annotations

from .errors import LockEntryCorrupted
from .lockfile import LockDocument, format_time, read_lockfile, write_lockfile
from .model import Definition, SecretDef, Unit
from .results import OperationError, SyncResult
from .storage import store
from .workspace import Workspace


def sync(
    ws: Workspace, *, dry_run: bool = False, force: bool = False, secret_name: str | None = None
) -> SyncResult:
    """Rules 2-5 of the spec: skip existing secrets unless forced; force ignores one_time and
    keeps rotation metadata; a failed target does not stop the others."""
    definition = ws.definition()
    selected = definition.select(secret_name)
    if dry_run:
        doc = read_lockfile(ws.lockfile_path)
        work, skipped, errors = plan(doc, selected, force=force)
        generated = [secret.name for secret, _ in work]
        return SyncResult(generated, skipped, [], errors, True, _message(generated, skipped, [], dry_run=True))

    with ws.write_lock():
        doc = read_lockfile(ws.lockfile_path)
        work, skipped, errors = plan(doc, selected, force=force)
        blocked = [error.secret for error in errors]
        if not work:
            return SyncResult([], skipped, blocked, errors, False, _message([], skipped, blocked))
        outcome = store(definition, doc, work, now=ws.now(), rotation=False, allow_scripts=ws.allow_scripts)
        record_definition(doc, definition, ws)
        write_lockfile(ws.lockfile_path, doc)
    failed = blocked + outcome.failed
    return SyncResult(
        outcome.stored, skipped, failed, errors + outcome.errors, False,
        _message(outcome.stored, skipped, failed),
    )


def plan(
    doc: LockDocument, secrets: tuple[SecretDef, ...], *, force: bool
) -> tuple[list[tuple[SecretDef, list[Unit]]], list[str], list[OperationError]]:
    """Which units to generate: missing ones, or every one when forced.

    A corrupted lockfile entry blocks its secret unless forced (then it is replaced), so a
    sync never silently overwrites state it cannot read.
    """
    work: list[tuple[SecretDef, list[Unit]]] = []
    skipped: list[str] = []
    errors: list[OperationError] = []
    for secret in secrets:
        todo: list[Unit] = []
        try:
            for unit in secret.units:
                if force or doc.entry(unit.lock_key) is None:
                    todo.append(unit)
        except LockEntryCorrupted as exc:
            errors.append(OperationError(secret.name, None, f"{exc.message}; sync with force to replace it"))
            continue
        if todo:
            work.append((secret, todo))
        else:
            skipped.append(secret.name)
    return work, skipped, errors


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


def _message(generated: list[str], skipped: list[str], failed: list[str], *, dry_run: bool = False) -> str:
    verb = "would be generated" if dry_run else "generated"
    parts = [f"{len(generated)} secret(s) {verb}", f"{len(skipped)} skipped"]
    if failed:
        parts.append(f"{len(failed)} failed")
    return ("Dry run: " if dry_run else "Sync complete: ") + ", ".join(parts) + "."
