"""The operations that write targets and the lockfile: sync, agent sync, rotation, import, clean.

Each runs in a job worker (``secretsapi.operations.run_job``) or a management command's process;
its ``progress`` (``service.progress``) is the caller's to give.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import asdict

from secretsapi import service
from secretsapi.actions.auditing import audited
from secretsapi.actions.workspaces import Workspace, lane, resource_of
from secretsapi.service.errors import ServiceError
from secretsapi.service.results import AgentSyncResult, CleanResult, ImportResult, RotationResult, SyncResult
from secretsapi.service.util.progress import Progress


def sync(
    ws: Workspace, *, actor: str | None, dry_run: bool = False, force: bool = False, secret_name: str | None = None,
    repair: bool = False, refresh: bool = False, progress: Progress | None = None,
) -> SyncResult:
    request = {"dry_run": dry_run, "force": force, "repair": repair, "refresh": refresh, "secret_name": secret_name,
               **lane(ws)}
    with audited("sync", resource_of(secret_name), actor, request, changes=not dry_run, ws=ws) as facts:
        result = service.sync(ws, dry_run=dry_run, force=force, secret_name=secret_name, repair=repair,
                              refresh=refresh, progress=progress)
        facts.update(generated=result.secrets_generated, skipped=result.secrets_skipped,
                     failed=result.secrets_failed, errors=[asdict(e) for e in result.errors])
        facts["repaired"] = result.secrets_repaired
        if result.written_targets:
            facts["written_targets"] = result.written_targets
        facts.written = result.written
        if result.sources:
            facts["sources"] = result.sources  # imported values: the source kind, never the value
        if result.refreshed:
            facts["refreshed"] = result.refreshed
        facts.succeeded = not (result.secrets_failed or result.errors)
    if not dry_run:
        _index_for_status(ws)
    return result


def clean_lockfile(ws: Workspace, *, actor: str | None, dry_run: bool = False) -> CleanResult:
    """SecretZero's ``clean``: drop the lockfile entries of secrets the definition no longer has."""
    request = {"dry_run": dry_run, "var_files": list(ws.var_files)}
    with audited("clean_lockfile", "secrets", actor, request, changes=not dry_run, ws=ws) as facts:
        result = service.clean_lockfile(ws, dry_run=dry_run)
        facts["removed"] = result.removed
    if not dry_run:
        _index_for_status(ws)
    return result


def import_values(
    ws: Workspace, *, actor: str | None, secret_names: Sequence[str] | None = None, dry_run: bool = False,
) -> ImportResult:
    """SecretZero's ``import``: record the hashes of the values targets already hold; generates nothing."""
    request = {"dry_run": dry_run, "secret_names": list(secret_names or []), "var_files": list(ws.var_files)}
    resource = resource_of(secret_names[0]) if secret_names and len(secret_names) == 1 else "secrets"
    with audited("import_values", resource, actor, request, changes=not dry_run, ws=ws) as facts:
        result = service.import_values(ws, secret_names=secret_names, dry_run=dry_run)
        # Counts and the keys recorded, not every row with its detail.
        counts: dict[str, int] = {}
        for row in result.rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        recorded = [row.lock_key for row in result.rows if row.status in ("imported", "updated")]
        facts.update(counts=counts, recorded=recorded, errors=[asdict(e) for e in result.errors])
        if result.refreshed:
            facts["refreshed"] = result.refreshed
        facts.succeeded = not result.errors
    if not dry_run:
        _index_for_status(ws)
    return result


def execute_rotation(
    ws: Workspace, *, actor: str | None, secret_name: str | None = None, force: bool = False,
    progress: Progress | None = None,
) -> RotationResult:
    request = {"secret_name": secret_name, "force": force, **lane(ws)}
    with audited("execute_rotation", resource_of(secret_name), actor, request, changes=True, ws=ws) as facts:
        result = service.execute_rotation(ws, secret_name=secret_name, force=force, progress=progress)
        facts.update(rotated=result.rotated, failed=result.failed, errors=[asdict(e) for e in result.errors])
        if result.written_targets:
            facts["written_targets"] = result.written_targets
        facts.written = result.written
        if result.sources:
            facts["sources"] = result.sources
        facts.succeeded = not (result.failed or result.errors)
    _index_for_status(ws)
    return result


def agent_sync(
    ws: Workspace, *, actor: str | None, dry_run: bool = False, force: bool = False, secret_name: str | None = None,
    repair: bool = True, refresh: bool = False, progress: Progress | None = None,
) -> AgentSyncResult:
    request = {"dry_run": dry_run, "force": force, "repair": repair, "refresh": refresh, "secret_name": secret_name,
               **lane(ws)}
    with audited("agent_sync", resource_of(secret_name), actor, request, changes=not dry_run, ws=ws) as facts:
        result = service.agent_sync(ws, dry_run=dry_run, force=force, secret_name=secret_name, repair=repair,
                                    refresh=refresh, progress=progress)
        facts.update(status=result.status, generated=result.sync.secrets_generated,
                     skipped=result.sync.secrets_skipped, failed=result.sync.secrets_failed,
                     errors=[asdict(e) for e in result.sync.errors])
        facts["repaired"] = result.sync.secrets_repaired
        if result.sync.sources:
            facts["sources"] = result.sync.sources
        if result.sync.refreshed:
            facts["refreshed"] = result.sync.refreshed
        if result.sync.written_targets:
            facts["written_targets"] = result.sync.written_targets
        facts.written = result.sync.written
        facts.succeeded = not (result.sync.secrets_failed or result.sync.errors)
    if not dry_run:
        _index_for_status(ws)
    return result


def _index_for_status(ws: Workspace) -> None:
    """After a write, while this process holds the lockfile it wrote: its status index for the
    ``status`` another process runs next (``service.index_lockfiles``). It only saves work, so
    a lockfile that cannot be read now is left to the operation that next reads it."""
    with contextlib.suppress(ServiceError):
        service.index_lockfiles(ws)
