"""Sync: generate the secrets that do not exist yet (or all, forced) and store them, and complete
the targets of the existing ones (SecretZero's sync: a target not recorded, missing or never
written gets the recorded value, copied from a target that holds it)."""

from __future__ import annotations

from collections.abc import Sequence

from secretsapi.service.definition.model import Definition
from secretsapi.service.results import CleanResult, ImportResult, OperationError, SyncResult, sync_summary
from secretsapi.service.state import credentials, upkeep, write
from secretsapi.service.state.credentials import due_retirements, retire_units
from secretsapi.service.state.lock_state import read_state, write_state
from secretsapi.service.state.outcome import StoreOutcome, written_targets
from secretsapi.service.state.plans import RotationRequest, SyncRequest
from secretsapi.service.state.rendered import with_rendered
from secretsapi.service.state.superseded import dead_tokens, revoke_superseded
from secretsapi.service.targets import TargetContext
from secretsapi.service.util.progress import Progress
from secretsapi.service.workspace import Workspace


def sync(
    ws: Workspace, *, dry_run: bool = False, force: bool = False, secret_name: str | None = None,
    repair: bool = False, refresh: bool = False, progress: Progress | None = None,
) -> SyncResult:
    """Rules 2-5 of the spec: skip existing secrets unless forced; force ignores one_time and
    keeps rotation metadata; a failed target does not stop the others.

    Every sync also completes the targets of existing secrets (``state.repair``): missing, new,
    never written or unreadable targets get the recorded value, and template outputs not
    rendered with their secrets' current values are rendered again. A target holding another
    value is an error, until ``repair`` puts the recorded value back there too.

    ``refresh`` first drops recorded target ids the definition no longer names (SecretZero's
    ``--refresh``, after a target was renamed or removed; ``state.refresh``). All of it is one
    write (``state.write.sync_write``): planned, locked once, written and committed together.
    ``progress`` counts the secrets generated (see ``state.write.write``).
    """
    definition = with_rendered(ws.definition())
    request = SyncRequest(definition.select(secret_name), force)
    if dry_run:
        doc = read_state(ws.lockfiles, definition)
        dry = write.plan_pass(doc, definition, request, repair=repair, refresh=refresh)
        generated = [secret.name for secret, _ in dry.plan.work]
        if repair:  # a token revoked or expired at its source is replaced (``_renew_dead_tokens``)
            ctx = TargetContext.of(definition)
            generated += [s.name for s in dead_tokens(doc, request.secrets, ctx, ws.now()) if s.name not in generated]
        fixes = dry.fixes
        unfinished = {error.secret for error in fixes.errors}
        skipped = [name for name in dry.plan.skipped
                   if name not in fixes.secrets and name not in unfinished and name not in generated]
        return SyncResult(generated, skipped, [], without_environment(definition, dry.plan.errors + fixes.errors),
                          True, sync_summary(generated, skipped, [], fixes.secrets, dry_run=True), fixes.secrets,
                          refreshed=_hidden(definition, dry.refreshed))

    retire_errors = retire_due(ws.write_place, definition, secret_name)
    reissued, reissue_errors = _reissue_dead_credentials(ws, definition, request) if repair else ([], [])
    renewed = _renew_dead_tokens(ws, definition, request) if repair else None
    done = write.sync_write(ws.write_place, definition, request, repair=repair, refresh=refresh, progress=progress)
    outcome = _merged(renewed, done.outcome)
    blocked = [error.secret for error in done.plan.errors]
    generated = outcome.stored if outcome is not None else []
    failed = blocked + (outcome.failed if outcome is not None else [])
    errors = [*retire_errors, *reissue_errors, *done.plan.errors, *done.fixes.errors,
              *(outcome.errors if outcome is not None else [])]
    # Tokens the new ones replaced are revoked once the lockfile is committed (and retried here).
    errors += revoke_superseded(ws.write_place, definition, request.secrets, outcome)
    repaired = [*reissued, *(name for name in done.repaired if name not in reissued)]
    # A secret with a target that does not hold its value is in errors on every sync until it does.
    unfinished = {error.secret for error in done.fixes.errors + (outcome.errors if outcome is not None else [])}
    skipped = [name for name in done.plan.skipped if name not in repaired and name not in unfinished]
    partial = (written_targets(outcome, partial_only=True, hide=definition.environment_hidden)
               if outcome is not None else {})
    written = (written_targets(outcome, partial_only=False, hide=definition.environment_hidden)
               if outcome is not None else {})
    return SyncResult(generated, skipped, failed, without_environment(definition, errors), False,
                      sync_summary(generated, skipped, failed, repaired, errors=len(errors)), repaired, partial,
                      outcome.sources if outcome is not None else {}, _hidden(definition, done.refreshed), written)


def _renew_dead_tokens(ws: Workspace, definition: Definition, request: SyncRequest) -> StoreOutcome | None:
    """A repair creates a new token for each secret whose token was revoked, expired or deleted at
    its source (``generators.tokens``): its targets' hashes still match, but what they hold is
    dead. A forced sync of those secrets alone, before the repair of the others."""
    dead = dead_tokens(read_state(ws.lockfiles, definition), request.secrets, TargetContext.of(definition), ws.now())
    if not dead:
        return None
    return write.write(ws.write_place, definition, SyncRequest(tuple(dead), force=True))[1]


def _merged(first: StoreOutcome | None, second: StoreOutcome | None) -> StoreOutcome | None:
    if first is None or second is None:
        return first or second
    return StoreOutcome(first.stored + second.stored, first.failed + second.failed, first.errors + second.errors,
                        first.written + second.written, {**first.sources, **second.sources},
                        first.companions + second.companions, {**first.repaired, **second.repaired},
                        first.unused_tokens + second.unused_tokens)


def retire_due(place: write.Place, definition: Definition, secret_name: str | None = None) -> list[OperationError]:
    """Retire the previous user (or key) of each source credential whose grace period is over
    (``credentials.lifecycle.retire``), under the lockfile lock, and record it. Run by every
    rotation (the scheduled one too) and every sync; one that fails is retried by the next."""
    selected = {s.name for s in definition.select(secret_name)}
    if not [u for u in due_retirements(read_state(place.lockfiles, definition), definition, place.clock())
            if u[0].name in selected]:
        return []
    with write.write_lock(place):
        doc = read_state(place.lockfiles, definition, exact=True)
        due = [u for u in due_retirements(doc, definition, place.clock()) if u[0].name in selected]
        problems = retire_units(doc, definition, due, place.clock())
        write_state(place.lockfiles, doc)
    return [OperationError(name, None, problem) for name, problem in problems]


def _reissue_dead_credentials(ws: Workspace, definition: Definition,
                              request: SyncRequest) -> tuple[list[str], list[OperationError]]:
    """A repair of a source credential no target holds a working copy of (its password was
    changed at the source behind the service's back) issues a new one: a forced rotation of
    those secrets. One whose recorded copy still logs in is written back by the repair itself."""
    doc = read_state(ws.lockfiles, definition)
    names = set(credentials.dead(definition, doc, request.secrets, TargetContext.of(definition)))
    if not names:
        return [], []
    chosen = tuple(secret for secret in request.secrets if secret.name in names)
    planned, outcome = write.write(ws.write_place, definition, RotationRequest(chosen, force=True, named=True))
    return (outcome.stored if outcome is not None else []), planned.errors + (outcome.errors if outcome else [])


def _hidden(definition: Definition, refreshed: dict[str, list[str]]) -> dict[str, list[str]]:
    return {key: [definition.environment_hidden(target) for target in ids] for key, ids in refreshed.items()}


def clean_lockfile(ws: Workspace, *, dry_run: bool = False) -> CleanResult:
    """SecretZero's ``clean``: drop the entries of secrets the definition no longer has."""
    return upkeep.clean_lockfile(ws.write_place, ws.definition(), dry_run=dry_run)


def import_values(ws: Workspace, *, secret_names: Sequence[str] | None = None, dry_run: bool = False) -> ImportResult:
    """SecretZero's ``import``: record the values targets already hold, generating nothing."""
    definition = with_rendered(ws.definition())
    selected = (definition.secrets if not secret_names
                else tuple(definition.secret(name) for name in dict.fromkeys(secret_names)))
    return upkeep.import_values(ws.write_place, definition, selected, dry_run=dry_run)


def without_environment(definition: Definition, errors: Sequence[OperationError]) -> list[OperationError]:
    """Errors naming a target built from the environment (``${HOME}/app.env``) by its expression,
    never the value: results and their audit rows show them."""
    hide = definition.environment_hidden
    return [OperationError(e.secret, e.target and hide(e.target), hide(e.message)) for e in errors]


