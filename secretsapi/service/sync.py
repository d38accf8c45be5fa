"""Sync: generate the secrets that do not exist yet (or all, forced) and store them, and complete
the targets of the existing ones (SecretZero's sync: a target not recorded, missing or never
written gets the recorded value, copied from a target that holds it)."""

from __future__ import annotations

from collections.abc import Sequence

from secretsapi.service.definition.model import Definition, SecretDef
from secretsapi.service.results import CleanResult, ImportResult, OperationError, SyncResult, sync_summary
from secretsapi.service.state import upkeep, write
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.plans import SyncRequest, plan_sync
from secretsapi.service.state.repair import plan_repairs
from secretsapi.service.state.upkeep import refresh_targets, stale_targets
from secretsapi.service.state.value_store import written_targets
from secretsapi.service.targets import TargetContext
from secretsapi.service.util.progress import Progress
from secretsapi.service.workspace import Workspace


def sync(
    ws: Workspace, *, dry_run: bool = False, force: bool = False, secret_name: str | None = None,
    repair: bool = False, refresh: bool = False, progress: Progress | None = None,
) -> SyncResult:
    """Rules 2-5 of the spec: skip existing secrets unless forced; force ignores one_time and
    keeps rotation metadata; a failed target does not stop the others.

    Every sync then completes the targets of existing secrets (``state.repair``, in a write of
    its own): missing, new, never written or unreadable targets get the recorded value. A target
    holding another value is an error, until ``repair`` puts the recorded value back there too.

    ``refresh`` first drops recorded target ids the definition no longer names (SecretZero's
    ``--refresh``, after a target was renamed or removed; ``lockfile_upkeep.refresh_targets``).
    ``progress`` counts the secrets generated (see ``state.write.write``).
    """
    definition = ws.definition()
    selected = definition.select(secret_name)
    request = SyncRequest(selected, force)
    if dry_run:
        doc = read_state(ws.lockfiles, definition)
        stale = stale_targets(doc, definition, selected) if refresh else {}
        dry = plan_sync(doc, request)
        generated = [secret.name for secret, _ in dry.work]
        fixes = plan_repairs(doc, _not_busy(selected, generated), TargetContext.of(definition), overwrite=repair)
        unfinished = {error.secret for error in fixes.errors}
        skipped = [name for name in dry.skipped if name not in fixes.secrets and name not in unfinished]
        return SyncResult(generated, skipped, [], without_environment(definition, dry.errors + fixes.errors), True,
                          sync_summary(generated, skipped, [], fixes.secrets, dry_run=True), fixes.secrets,
                          refreshed=_hidden(definition, stale))

    place = ws.write_place
    refreshed = refresh_targets(place, definition, selected) if refresh else {}
    written, outcome = write.write(place, definition, request, progress)
    blocked = [error.secret for error in written.errors]
    generated = outcome.stored if outcome is not None else []
    failed = blocked + (outcome.failed if outcome is not None else [])
    errors = written.errors + (outcome.errors if outcome is not None else [])
    busy = [secret.name for secret, _ in written.work] + blocked
    fixed = write.repair(place, definition, _not_busy(selected, busy), overwrite=repair)
    repaired, errors = fixed.repaired, errors + fixed.errors
    if outcome is None and not repaired:
        write.record_definition_if_stale(place, definition)
    # A secret with a target that does not hold its value is in errors on every sync until it does.
    unfinished = {error.secret for error in fixed.errors}
    skipped = [name for name in written.skipped if name not in repaired and name not in unfinished]
    partial = (written_targets(outcome, partial_only=True, hide=definition.environment_hidden)
               if outcome is not None else {})
    return SyncResult(generated, skipped, failed, without_environment(definition, errors), False,
                      sync_summary(generated, skipped, failed, repaired, errors=len(errors)), repaired, partial,
                      outcome.sources if outcome is not None else {}, _hidden(definition, refreshed))


def _hidden(definition: Definition, refreshed: dict[str, list[str]]) -> dict[str, list[str]]:
    return {key: [definition.environment_hidden(target) for target in ids] for key, ids in refreshed.items()}


def clean_lockfile(ws: Workspace, *, dry_run: bool = False) -> CleanResult:
    """SecretZero's ``clean``: drop the entries of secrets the definition no longer has."""
    return upkeep.clean_lockfile(ws.write_place, ws.definition(), dry_run=dry_run)


def import_values(ws: Workspace, *, secret_names: Sequence[str] | None = None, dry_run: bool = False) -> ImportResult:
    """SecretZero's ``import``: record the values targets already hold, generating nothing."""
    definition = ws.definition()
    selected = (definition.secrets if not secret_names
                else tuple(definition.secret(name) for name in dict.fromkeys(secret_names)))
    return upkeep.import_values(ws.write_place, definition, selected, dry_run=dry_run)


def without_environment(definition: Definition, errors: Sequence[OperationError]) -> list[OperationError]:
    """Errors naming a target built from the environment (``${HOME}/app.env``) by its expression,
    never the value: results and their audit rows show them."""
    hide = definition.environment_hidden
    return [OperationError(e.secret, e.target and hide(e.target), hide(e.message)) for e in errors]


def _not_busy(selected: Sequence[SecretDef], busy: Sequence[str]) -> list[SecretDef]:
    """The selected secrets a repair may take: not those this sync generates (or could not read)."""
    taken = set(busy)
    return [secret for secret in selected if secret.name not in taken]
