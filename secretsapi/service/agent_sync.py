"""Sync for unattended agents: the sync result plus one overall status and per-secret outcomes."""

from __future__ import annotations

from secretsapi.service.results import AgentSyncResult, OperationError, SecretOutcome, SyncResult
from secretsapi.service.sync import sync
from secretsapi.service.util.progress import Progress
from secretsapi.service.workspace import Workspace


def agent_sync(ws: Workspace, *, dry_run: bool = False, force: bool = False,
               secret_name: str | None = None, repair: bool = True,
               progress: Progress | None = None) -> AgentSyncResult:
    """Idempotent: once everything exists and every target holds its value, a repeat call
    writes nothing and says nothing_to_do. Repairs broken targets unless ``repair`` is off."""
    result = sync(ws, dry_run=dry_run, force=force, secret_name=secret_name, repair=repair, progress=progress)
    by_secret: dict[str, list[OperationError]] = {}
    for error in result.errors:
        by_secret.setdefault(error.secret, []).append(error)
    outcomes = [
        SecretOutcome(name, "partial" if by_secret.get(name) else "generated", by_secret.get(name, []))
        for name in result.secrets_generated
    ]
    outcomes += [SecretOutcome(name, "repaired", by_secret.get(name, [])) for name in result.secrets_repaired]
    outcomes += [SecretOutcome(name, "skipped", by_secret.get(name, [])) for name in result.secrets_skipped]
    outcomes += [SecretOutcome(name, "failed", by_secret.get(name, [])) for name in result.secrets_failed]
    return AgentSyncResult(_status(result), result, outcomes)


def _status(result: SyncResult) -> str:
    if result.secrets_failed and not result.secrets_generated and not result.secrets_repaired:
        return "failed"
    if result.errors:
        return "partial"
    if result.secrets_generated or result.secrets_repaired:
        return "complete"
    return "nothing_to_do"
