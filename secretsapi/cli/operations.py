"""What each ``secretsctl`` subcommand does once its flags are read: one action (or one per named
secret), its report printed as the management commands print it, and the exit code.

Imported by ``handover.operations`` once Django is set up; the Click declarations
(``secretsapi.cli.app``) stay free of Django so that ``--help`` and completion start fast.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings

from secretsapi.actions import checks as checks_actions
from secretsapi.actions import discovery, secret_reads, workspaces, writes
from secretsapi.cli import auditlog, listings
from secretsapi.cli.program import SECRETZERO_DEFAULT_LOCKFILE, Lane
from secretsapi.cli.progress import reporting, steps
from secretsapi.management.base import as_failure, cli_actor, in_project, migrate_pending, require_declared
from secretsapi.management.reports import (
    Report,
    clean_report,
    drift_report,
    import_report,
    merged_rotation,
    merged_rotation_check,
    merged_sync,
    policy_report,
    rotation_check_report,
    rotation_report,
    show_report,
    status_report,
    sync_report,
    validation_report,
)
from secretsapi.service.errors import SecretNotDefined


def run(lane: Lane, operation: str, arguments: dict[str, Any]) -> int:
    """Run one operation, print its report (or its error); the exit code."""
    try:
        migrate_pending()  # a fresh database, as the management commands find it
        with in_project(lane.file):
            report = OPERATIONS[operation](lane, **arguments)
    except Exception as exc:
        return listings.emit_failure(as_failure(exc), lane.output_format)
    return listings.emit(report, lane.output_format)


def workspace(lane: Lane) -> workspaces.Workspace:
    definition = lane.file.absolute() if lane.file is not None else None
    folder = (definition or Path(settings.SERVICE_CONFIG).absolute()).parent
    lockfile = None
    if lane.lockfile and lane.lockfile != SECRETZERO_DEFAULT_LOCKFILE:
        lockfile = folder / lane.lockfile  # an absolute one replaces the folder
    return workspaces.workspace(definition=definition, lockfile=lockfile,
                                var_files=[_var_file(given, folder) for given in lane.var_files],
                                environment=lane.environment, command_line=True)


def _var_file(given: str, folder: Path) -> str:
    """SecretZero reads ``-v`` paths from the working folder; the engine, from the definition's.
    A path that exists from here is handed over relative to the definition's folder (or
    absolute, which the engine refuses outside it); any other as given."""
    here = Path(given).absolute()
    if not here.exists():
        return given
    try:
        return str(here.relative_to(folder))
    except ValueError:
        return str(here)


def _names(secret_name: str | None, secrets: Sequence[str]) -> list[str | None]:
    """The secrets named (positional and ``-s``), in order, once each; ``[None]``: every secret."""
    named = list(dict.fromkeys([*([secret_name] if secret_name else []), *secrets]))
    return list(named) if named else [None]


def sync(lane: Lane, *, dry_run: bool, secrets: Sequence[str], force: bool, repair: bool, refresh: bool) -> Report:
    ws, names, results = workspace(lane), _names(None, secrets), []
    if names == [None]:  # one operation: the engine reports its progress
        with reporting("sync", quiet=lane.quiet) as report:
            return sync_report(writes.sync(ws, actor=cli_actor(), dry_run=dry_run, force=force,
                                           repair=repair, refresh=refresh, progress=report))
    with steps(len(names), "sync", quiet=lane.quiet) as advance:
        for name in names:
            results.append(writes.sync(ws, actor=cli_actor(), dry_run=dry_run, force=force, secret_name=name,
                                       repair=repair, refresh=refresh))
            advance()
    return sync_report(merged_sync(results))


def rotate(lane: Lane, *, secret_name: str | None, secrets: Sequence[str], force: bool, dry_run: bool) -> Report:
    ws, names = workspace(lane), _names(secret_name, secrets)
    with steps(len(names), "rotate", quiet=lane.quiet) as advance:
        if dry_run:
            checks = []
            for name in names:
                checks.append(checks_actions.check_rotation(ws, actor=cli_actor(), secret_name=name))
                advance()
            return rotation_check_report(merged_rotation_check(checks))
        if names == [None]:
            with reporting("rotate", quiet=lane.quiet) as report:
                return rotation_report(writes.execute_rotation(ws, actor=cli_actor(), force=force, progress=report))
        results = []
        for name in names:
            results.append(writes.execute_rotation(ws, actor=cli_actor(), secret_name=name, force=force))
            advance()
    return rotation_report(merged_rotation(results))


def status(lane: Lane, *, secrets: Sequence[str], verbose: bool) -> Report:
    ws, names = workspace(lane), list(dict.fromkeys(secrets))
    if not names:  # every secret, in one pass
        return status_report(secret_reads.secret_statuses(ws, actor=cli_actor()), single=False, verbose=verbose)
    statuses = []
    with steps(len(names), "status", quiet=lane.quiet) as advance:
        for name in names:
            statuses.append(secret_reads.secret_status(ws, name, actor=cli_actor()))
            advance()
    require_declared(ws, [st.name for st in statuses if not st.exists])
    return status_report(statuses, single=len(names) == 1, verbose=verbose)


def show(lane: Lane, *, secret_name: str) -> Report:
    ws = workspace(lane)
    summaries = secret_reads.list_secrets(ws, actor=cli_actor())
    found = [s for s in summaries if s.name == secret_name]
    if not found:
        raise SecretNotDefined(secret_name, [s.name for s in summaries])
    return show_report(found[0], secret_reads.secret_status(ws, secret_name, actor=cli_actor()))


def drift(lane: Lane, *, secret_name: str | None) -> Report:
    with reporting("drift", quiet=lane.quiet) as report:
        return drift_report(checks_actions.check_drift(workspace(lane), actor=cli_actor(), secret_name=secret_name,
                                                       progress=report))


def clean(lane: Lane, *, dry_run: bool) -> Report:
    return clean_report(writes.clean_lockfile(workspace(lane), actor=cli_actor(), dry_run=dry_run))


def import_(lane: Lane, *, secrets: Sequence[str], dry_run: bool) -> Report:
    return import_report(writes.import_values(workspace(lane), actor=cli_actor(), secret_names=list(secrets) or None,
                                              dry_run=dry_run))


def policy(lane: Lane, *, fail_on_warning: bool) -> Report:
    return policy_report(checks_actions.check_policy(workspace(lane), actor=cli_actor(),
                                                     fail_on_warning=fail_on_warning))


def validate(lane: Lane) -> Report:
    return validation_report(checks_actions.validate_definition_file(workspace(lane), actor=cli_actor()))


def render(lane: Lane, *, output: Path | None, as_yaml: bool) -> Report:
    return listings.rendered(checks_actions.render_config(workspace(lane), actor=cli_actor()).config, output=output,
                             as_yaml=as_yaml)


def list_secrets(lane: Lane, *, name_filter: str | None) -> Report:
    return listings.secrets_listing(secret_reads.list_secrets(workspace(lane), actor=cli_actor()), name_filter)


def list_targets(lane: Lane) -> Report:
    return listings.targets_listing(checks_actions.render_config(workspace(lane), actor=cli_actor()).config)


def list_providers(lane: Lane) -> Report:
    _, declared = discovery.list_providers(workspace(lane), actor=cli_actor())
    return listings.providers_listing(declared)


def list_variables(lane: Lane, *, name_filter: str | None) -> Report:
    rendered = checks_actions.render_config(workspace(lane), actor=cli_actor())
    return listings.variables_listing(rendered.config, name_filter)


OPERATIONS: dict[str, Callable[..., Report | None]] = {
    "sync": sync, "rotate": rotate, "status": status, "show": show, "drift": drift, "clean": clean,
    "import": import_, "policy": policy, "validate": validate, "render": render, "list_secrets": list_secrets,
    "list_targets": list_targets, "list_providers": list_providers, "list_variables": list_variables,
    "audit": auditlog.page, "audit_follow": auditlog.follow,
}
