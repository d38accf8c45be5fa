"""Sync: generate the secrets that do not exist yet (or all, forced) and store them."""

from __future__ import annotations

from collections.abc import Sequence

from secretsapi.service.definition.model import SecretDef, Unit
from secretsapi.service.errors import LockEntryCorrupted
from secretsapi.service.results import OperationError, SyncResult
from secretsapi.service.state import write_transaction
from secretsapi.service.state.lockfile import LockDocument
from secretsapi.service.state.lockfile_io import read_lockfile
from secretsapi.service.state.write_transaction import Plan
from secretsapi.service.workspace import Workspace


def sync(
    ws: Workspace, *, dry_run: bool = False, force: bool = False, secret_name: str | None = None
) -> SyncResult:
    """Rules 2-5 of the spec: skip existing secrets unless forced; force ignores one_time and
    keeps rotation metadata; a failed target does not stop the others."""
    definition = ws.definition()
    selected = definition.select(secret_name)
    if dry_run:
        dry = plan(read_lockfile(ws.lockfile_path), selected, force=force)
        generated = [secret.name for secret, _ in dry.work]
        return SyncResult(generated, dry.skipped, [], dry.errors, True,
                          _message(generated, dry.skipped, [], dry_run=True))

    written, outcome = write_transaction.write(
        ws, definition, lambda doc: plan(doc, selected, force=force), rotation=False
    )
    blocked = [error.secret for error in written.errors]
    if outcome is None:
        write_transaction.record_definition_if_stale(ws, definition)
        return SyncResult([], written.skipped, blocked, written.errors, False,
                          _message([], written.skipped, blocked))
    failed = blocked + outcome.failed
    return SyncResult(
        outcome.stored, written.skipped, failed, written.errors + outcome.errors, False,
        _message(outcome.stored, written.skipped, failed),
    )


def plan(doc: LockDocument, secrets: tuple[SecretDef, ...], *, force: bool) -> Plan:
    """Which units to generate: missing ones, or every one when forced.

    A corrupted lockfile entry blocks its secret unless forced (then it is replaced), so a
    sync never silently overwrites state it cannot read.
    """
    work: list[tuple[SecretDef, Sequence[Unit]]] = []
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
    return Plan(work, skipped, errors)


def _message(generated: list[str], skipped: list[str], failed: list[str], *, dry_run: bool = False) -> str:
    verb = "would be generated" if dry_run else "generated"
    parts = [f"{len(generated)} secret(s) {verb}", f"{len(skipped)} skipped"]
    if failed:
        parts.append(f"{len(failed)} failed")
    return ("Dry run: " if dry_run else "Sync complete: ") + ", ".join(parts) + "."
