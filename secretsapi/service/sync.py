"""Sync: generate the secrets that do not exist yet (or all, forced) and store them."""

from __future__ import annotations

from collections.abc import Sequence

from secretsapi.service.definition.model import Definition, SecretDef
from secretsapi.service.results import OperationError, SyncResult
from secretsapi.service.state import write
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.plans import SyncRequest, plan_sync
from secretsapi.service.state.repair import RepairPlan, plan_repairs
from secretsapi.service.state.value_store import written_targets
from secretsapi.service.targets import TargetContext
from secretsapi.service.util.progress import Progress
from secretsapi.service.workspace import Workspace


def sync(
    ws: Workspace, *, dry_run: bool = False, force: bool = False, secret_name: str | None = None,
    repair: bool = False, progress: Progress | None = None,
) -> SyncResult:
    """Rules 2-5 of the spec: skip existing secrets unless forced; force ignores one_time and
    keeps rotation metadata; a failed target does not stop the others.

    ``repair`` also puts the recorded value of existing secrets back into their broken
    targets (see ``state.repair``), after the generation and in a write of its own.
    ``progress`` counts the secrets generated (see ``state.write.write``).
    """
    definition = ws.definition()
    selected = definition.select(secret_name)
    request = SyncRequest(selected, force)
    if dry_run:
        doc = read_state(ws.lockfiles, definition)
        dry = plan_sync(doc, request)
        generated = [secret.name for secret, _ in dry.work]
        fixes = (plan_repairs(doc, _not_busy(selected, generated), TargetContext.of(definition)) if repair
                 else RepairPlan([], []))
        skipped = [name for name in dry.skipped if name not in fixes.secrets]
        return SyncResult(generated, skipped, [], without_environment(definition, dry.errors + fixes.errors), True,
                          _message(generated, skipped, [], fixes.secrets, dry_run=True), fixes.secrets)

    place = ws.write_place
    written, outcome = write.write(place, definition, request, progress)
    blocked = [error.secret for error in written.errors]
    generated = outcome.stored if outcome is not None else []
    failed = blocked + (outcome.failed if outcome is not None else [])
    errors = written.errors + (outcome.errors if outcome is not None else [])
    repaired: list[str] = []
    if repair:
        busy = [secret.name for secret, _ in written.work] + blocked
        fixed = write.repair(place, definition, _not_busy(selected, busy))
        repaired, errors = fixed.repaired, errors + fixed.errors
    if outcome is None and not repaired:
        write.record_definition_if_stale(place, definition)
    skipped = [name for name in written.skipped if name not in repaired]
    partial = (written_targets(outcome, partial_only=True, hide=definition.environment_hidden)
               if outcome is not None else {})
    return SyncResult(generated, skipped, failed, without_environment(definition, errors), False,
                      _message(generated, skipped, failed, repaired), repaired, partial)


def without_environment(definition: Definition, errors: Sequence[OperationError]) -> list[OperationError]:
    """Errors naming a target built from the environment (``${HOME}/app.env``) by its expression,
    never the value: results and their audit rows show them."""
    hide = definition.environment_hidden
    return [OperationError(e.secret, e.target and hide(e.target), hide(e.message)) for e in errors]


def _not_busy(selected: Sequence[SecretDef], busy: Sequence[str]) -> list[SecretDef]:
    """The selected secrets a repair may take: not those this sync generates (or could not read)."""
    return [secret for secret in selected if secret.name not in busy]


def _message(
    generated: list[str], skipped: list[str], failed: list[str], repaired: Sequence[str] = (), *,
    dry_run: bool = False,
) -> str:
    verb = "would be generated" if dry_run else "generated"
    parts = [f"{len(generated)} secret(s) {verb}", f"{len(skipped)} skipped"]
    if repaired:
        parts.append(f"{len(repaired)} {'would be repaired' if dry_run else 'repaired'}")
    if failed:
        parts.append(f"{len(failed)} failed")
    return ("Dry run: " if dry_run else "Sync complete: ") + ", ".join(parts) + "."
