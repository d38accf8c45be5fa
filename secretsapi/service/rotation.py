"""Rotation: which secrets are due (check) and regenerating them (execute)."""

from __future__ import annotations

from dataclasses import replace

from secretsapi.service.definition.model import Definition, SecretDef
from secretsapi.service.results import RotationCheckResult, RotationResult
from secretsapi.service.state import write
from secretsapi.service.state.due import move_problem, rotation_status
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.lockfile import LockDocument
from secretsapi.service.state.outcome import written_targets
from secretsapi.service.state.plans import RotationRequest
from secretsapi.service.state.rendered import with_rendered
from secretsapi.service.state.superseded import revoke_superseded
from secretsapi.service.sync import retire_due, without_environment
from secretsapi.service.targets import TargetContext
from secretsapi.service.util.progress import Progress
from secretsapi.service.workspace import Workspace


def check_rotation(ws: Workspace, *, secret_name: str | None = None) -> RotationCheckResult:
    """Which secrets are due. A secret that a rotation would move (see ``move_problem``) keeps
    its due state, and its status says why it cannot be rotated with these var files."""
    definition = with_rendered(ws.definition())
    doc = read_state(ws.lockfiles, definition)
    return _check(doc, definition, definition.select(secret_name), ws)


def _check(
    doc: LockDocument, definition: Definition, secrets: tuple[SecretDef, ...], ws: Workspace
) -> RotationCheckResult:
    now = ws.now()
    ctx = TargetContext.of(definition)
    results = []
    for secret in secrets:
        status = rotation_status(doc, secret, now, ws.warning_days)
        problem = move_problem(doc, secret, ctx, ws.var_files)
        results.append(replace(status, status=f"{status.status}; {problem}") if problem else status)
    due = [r.name for r in results if r.should_rotate and r.status.startswith("due")]
    overdue = [r.name for r in results if r.should_rotate and r.status.startswith("overdue")]
    return RotationCheckResult(len(results), due, overdue, results)


def execute_rotation(
    ws: Workspace, *, secret_name: str | None = None, force: bool = False, progress: Progress | None = None
) -> RotationResult:
    """Rotate due secrets (all selected ones when forced).

    A one-time secret is rotated only when it is named and forced (rule 3). A rotation never
    moves a secret: one whose recorded targets this rendering of the definition would not all
    write fails, and nothing is written for it (``move_problem``). ``progress`` counts the
    secrets rotated of those due (see ``state.write.write``).
    """
    definition = with_rendered(ws.definition())
    retire_errors = retire_due(ws.write_place, definition, secret_name)
    request = RotationRequest(definition.select(secret_name), force, named=secret_name is not None,
                              warning_days=ws.warning_days, var_files=tuple(ws.var_files), cut_grace=force)
    planned, outcome = write.write(ws.write_place, definition, request, progress)
    failed = [e.secret for e in planned.errors] + (outcome.failed if outcome else [])
    rotated = outcome.stored if outcome else []
    revoked = revoke_superseded(ws.write_place, definition, request.secrets, outcome)
    errors = without_environment(definition,
                                 retire_errors + planned.errors + (outcome.errors if outcome else []) + revoked)
    partial = written_targets(outcome, partial_only=True, hide=definition.environment_hidden) if outcome else {}
    written = written_targets(outcome, partial_only=False, hide=definition.environment_hidden) if outcome else {}
    return RotationResult(rotated, failed, errors, _message(rotated, failed), partial,
                          outcome.sources if outcome else {}, written)


def _message(rotated: list[str], failed: list[str]) -> str:
    if not rotated and not failed:
        return "No secrets needed rotation."
    text = f"Rotated {len(rotated)} secret(s)."
    return text + (f" {len(failed)} failed." if failed else "")
