"""The ``secretsctl`` program: SecretZero's subcommands, flags and defaults.

Flags mean what they mean in SecretZero: ``-f`` the definition (default ``SERVICE_CONFIG``, else
``./Secretfile.yml``), ``-l`` the lockfile (relative to the definition's folder; SecretZero's
default ``.gitsecrets.lock`` means "the environment's, or the default"), ``-v`` a variable file
(repeatable, relative to the working folder), ``-e`` the environment, ``-s`` a secret
(repeatable), ``--format text|json``. ``-f``, ``-e`` and ``-q`` may also come before the
subcommand. Exit codes are the management commands': 0 clean, 1 error (bad arguments included),
2 a finding (drift, due, not compliant, invalid, not generated).
"""

from __future__ import annotations

import contextlib
import difflib
import gc
import itertools
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click
import yaml
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, connections

from secretsapi import __version__, actions
from secretsapi.cli.progress import reporting, steps
from secretsapi.management.base import (
    ENVIRONMENT_HELP,
    EXIT_ERROR,
    as_failure,
    cli_actor,
    error_json,
    migrate_pending,
)
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
    table_report,
    validation_report,
)
from secretsapi.service.errors import SecretNotDefined

PROG = "secretsctl"
# SecretZero's lockfile flag default: given as is, it names no lockfile of its own.
SECRETZERO_DEFAULT_LOCKFILE = ".gitsecrets.lock"
INTERRUPTED = 130


class Program(click.Group):
    """Suggests the closest subcommand for a mistyped one (Click does it for flags), and exits 1,
    not Click's 2, on bad arguments: 2 means a finding here, as in the management commands."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            if close:
                ctx.fail(f"No such command '{name}'. Did you mean '{close[0]}'?")
        return super().resolve_command(ctx, args)

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(argv, prog_name or PROG, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            # A bare `secretsctl` (or `secretsctl list`) is a request for help, as in SecretZero.
            click.echo(exc.format_message())
            sys.exit(0)
        except click.ClickException as exc:
            if _json_wanted(argv):
                click.echo(json.dumps({"error": "usage", "detail": exc.format_message()}, indent=2))
            else:
                exc.show()
            sys.exit(EXIT_ERROR)
        except click.Abort:
            click.echo("interrupted", err=True)
            sys.exit(INTERRUPTED)
        sys.exit(code if isinstance(code, int) else 0)


def _json_wanted(argv: Sequence[str]) -> bool:
    return "--format=json" in argv or any(a == "--format" and b == "json" for a, b in itertools.pairwise(argv))


@dataclass
class Lane:
    """Where a subcommand runs: what its flags (and the group's) name."""

    file: Path | None
    lockfile: str | None
    var_files: tuple[str, ...]
    environment: str | None
    output_format: str
    quiet: bool

    def workspace(self) -> actions.Workspace:
        definition = self.file.absolute() if self.file is not None else None
        folder = (definition or _configured_definition()).parent
        lockfile = None
        if self.lockfile and self.lockfile != SECRETZERO_DEFAULT_LOCKFILE:
            lockfile = folder / self.lockfile  # an absolute one replaces the folder
        return actions.workspace(definition=definition, lockfile=lockfile,
                                 var_files=[_var_file(given, folder) for given in self.var_files],
                                 environment=self.environment, command_line=True)


def _configured_definition() -> Path:
    return Path(settings.SERVICE_CONFIG).absolute()


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




def _finish(ctx: click.Context, /, lane: Lane, produce: Callable[[], Report]) -> NoReturn:
    """Run one operation, print its report (or its error) and exit with its code."""
    try:
        migrate_pending()  # a fresh database, as the management commands find it
        report = produce()
    except Exception as exc:
        failure = as_failure(exc)
        if lane.output_format == "json":
            click.echo(error_json(failure))
        else:
            click.echo(f"Error: {failure.detail}", err=True)
        code = failure.returncode
    else:
        click.echo(json.dumps(report.data, indent=2, default=str) if lane.output_format == "json" else report.text)
        if report.problem is not None and lane.output_format != "json":
            click.echo(report.problem.detail, err=True)
        code = report.exit_code
    ctx.exit(code)


# -- options ------------------------------------------------------------------------------------


def lane_options(*, var_file_short: bool = True, lockfile: bool = True, formats: Sequence[str] = ("text", "json"),
                 ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``-f``, ``-e``, ``-v``, ``-l``, ``--format`` and ``-q`` as SecretZero's subcommands take them;
    ``var_file_short=False`` where SecretZero gives ``-v`` another meaning (``status --verbose``)."""
    options = [
        click.option("-f", "--file", "file", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Definition file (default: SERVICE_CONFIG, else ./Secretfile.yml)."),
        click.option("-e", "--environment", "--env", "environment", default=None, help=ENVIRONMENT_HELP),
        click.option(*(("-v", "--var-file") if var_file_short else ("--var-file",)), "var_files", multiple=True,
                     help="Variable file to merge, from the working folder (repeatable; later files win)."),
        click.option("--format", "output_format", type=click.Choice(list(formats)), default=formats[0],
                     show_default=True, help="Output format."),
        click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar."),
    ]
    if lockfile:
        options.append(click.option("-l", "--lockfile", "lockfile", default=None,
                                    help="Lockfile, relative to the definition's folder (default: the "
                                         "environment's, else .gitsecrets.lock / <stem>.lock beside it)."))

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def _lane(ctx: click.Context, /, params: dict[str, Any]) -> Lane:
    """The subcommand's flags, falling back to those given before it."""
    group = ctx.find_root().params
    return Lane(
        file=params.pop("file") or group.get("file"),
        lockfile=params.pop("lockfile", None),
        var_files=tuple(params.pop("var_files", ())),
        environment=params.pop("environment") or group.get("environment"),
        output_format=params.pop("output_format"),
        quiet=params.pop("quiet") or bool(group.get("quiet")),
    )


def _names(secret_name: str | None, secrets: Sequence[str]) -> list[str | None]:
    """The secrets named (positional and ``-s``), in order, once each; ``[None]``: every secret."""
    named = list(dict.fromkeys([*([secret_name] if secret_name else []), *secrets]))
    return list(named) if named else [None]


# -- the program --------------------------------------------------------------------------------


@click.group(name=PROG, cls=Program, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name=PROG)
@click.option("-f", "--file", "file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Definition file for every subcommand (default: SERVICE_CONFIG, else ./Secretfile.yml).")
@click.option("-e", "--environment", "--env", "environment", default=None, help=ENVIRONMENT_HELP)
@click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar.")
@click.option("-n", "--non-interactive", is_flag=True, default=False,
              help="Accepted for SecretZero's scripts: secretsctl never prompts.")
def cli(file: Path | None, environment: str | None, quiet: bool, non_interactive: bool) -> None:
    """Secrets orchestration: SecretZero's command line over this service.

    Exit codes: 0 clean, 1 error, 2 a finding (drift, rotation due, not compliant, invalid,
    not generated). Shell completion: eval "$(_SECRETSCTL_COMPLETE=bash_source secretsctl)".
    """


@cli.command()
@lane_options()
@click.option("--dry-run", "--plan", "dry_run", is_flag=True, help="Show what would be done; write nothing.")
@click.option("-s", "--secret", "secrets", multiple=True, help="Only this secret (repeatable).")
@click.option("--force", is_flag=True, help="Regenerate existing secrets too.")
@click.option("--repair", is_flag=True, help="Also put recorded values back into targets that hold another value.")
@click.option("--refresh", is_flag=True, help="First drop recorded target ids the definition no longer names.")
@click.option("--no-prompt", is_flag=True, help="Accepted for SecretZero's scripts: secretsctl never prompts.")
@click.pass_context
def sync(ctx: click.Context, /, dry_run: bool, secrets: tuple[str, ...], force: bool, repair: bool, refresh: bool,
         no_prompt: bool, **params: Any) -> None:
    """Generate secrets that do not exist yet and write them to their targets."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        ws, names, results = lane.workspace(), _names(None, secrets), []
        if names == [None]:  # one operation: the engine reports its progress
            with reporting("sync", quiet=lane.quiet) as report:
                return sync_report(actions.sync(ws, actor=cli_actor(), dry_run=dry_run, force=force,
                                                repair=repair, refresh=refresh, progress=report))
        with steps(len(names), "sync", quiet=lane.quiet) as advance:
            for name in names:
                results.append(actions.sync(ws, actor=cli_actor(), dry_run=dry_run, force=force, secret_name=name,
                                            repair=repair, refresh=refresh))
                advance()
        return sync_report(merged_sync(results))

    _finish(ctx, lane, produce)


@cli.command()
@click.argument("secret_name", required=False)
@lane_options()
@click.option("-s", "--secret", "secrets", multiple=True, help="Only this secret (repeatable).")
@click.option("--force", is_flag=True, help="Rotate even if not due.")
@click.option("--dry-run", is_flag=True, help="Only report which secrets are due (exit 2 when any is).")
@click.pass_context
def rotate(ctx: click.Context, /, secret_name: str | None, secrets: tuple[str, ...], force: bool, dry_run: bool,
           **params: Any) -> None:
    """Rotate the secrets that are due (all named ones with --force); --dry-run only reports."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        ws, names = lane.workspace(), _names(secret_name, secrets)
        with steps(len(names), "rotate", quiet=lane.quiet) as advance:
            if dry_run:
                checks = []
                for name in names:
                    checks.append(actions.check_rotation(ws, actor=cli_actor(), secret_name=name))
                    advance()
                return rotation_check_report(merged_rotation_check(checks))
            if names == [None]:
                with reporting("rotate", quiet=lane.quiet) as report:
                    return rotation_report(actions.execute_rotation(ws, actor=cli_actor(), force=force,
                                                                    progress=report))
            results = []
            for name in names:
                results.append(actions.execute_rotation(ws, actor=cli_actor(), secret_name=name, force=force))
                advance()
        return rotation_report(merged_rotation(results))

    _finish(ctx, lane, produce)


@cli.command()
@lane_options(var_file_short=False)
@click.option("-s", "--secret", "secrets", multiple=True, help="Only this secret (repeatable).")
@click.option("-v", "--verbose", "--detailed", "verbose", is_flag=True, help="Also list each secret's target ids.")
@click.pass_context
def status(ctx: click.Context, /, secrets: tuple[str, ...], verbose: bool, **params: Any) -> None:
    """Whether each secret exists, when it was created and rotated, when it falls due (exit 2 if any
    is not generated)."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        ws, names = lane.workspace(), list(dict.fromkeys(secrets))
        if not names:  # every secret, in one pass
            return status_report(actions.secret_statuses(ws, actor=cli_actor()), single=False, verbose=verbose)
        statuses = []
        with steps(len(names), "status", quiet=lane.quiet) as advance:
            for name in names:
                statuses.append(actions.secret_status(ws, name, actor=cli_actor()))
                advance()
        return status_report(statuses, single=len(names) == 1, verbose=verbose)

    _finish(ctx, lane, produce)


@cli.command()
@click.argument("secret_name")
@lane_options()
@click.option("-d", "--detailed", is_flag=True, help="Accepted for SecretZero's scripts: every detail is shown.")
@click.pass_context
def show(ctx: click.Context, /, secret_name: str, detailed: bool, **params: Any) -> None:
    """One secret: its definition and what the lockfile records (never its value)."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        ws = lane.workspace()
        found = [s for s in actions.list_secrets(ws, actor=cli_actor()) if s.name == secret_name]
        if not found:
            raise SecretNotDefined(secret_name)
        return show_report(found[0], actions.secret_status(ws, secret_name, actor=cli_actor()))

    _finish(ctx, lane, produce)


@cli.command()
@click.argument("secret_name", required=False)
@lane_options()
@click.pass_context
def drift(ctx: click.Context, /, secret_name: str | None, **params: Any) -> None:
    """Compare the targets with the lockfile (exit 2 on drift)."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        with reporting("drift", quiet=lane.quiet) as report:
            return drift_report(actions.check_drift(lane.workspace(), actor=cli_actor(), secret_name=secret_name,
                                                    progress=report))

    _finish(ctx, lane, produce)


@cli.command()
@lane_options()
@click.option("--dry-run", is_flag=True, help="List the entries of secrets no longer defined; remove nothing.")
@click.pass_context
def clean(ctx: click.Context, /, dry_run: bool, **params: Any) -> None:
    """Remove the lockfile entries of secrets the definition no longer declares."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        return clean_report(actions.clean_lockfile(lane.workspace(), actor=cli_actor(), dry_run=dry_run))

    _finish(ctx, lane, produce)


@cli.command("import")
@lane_options()
@click.option("-s", "--secret", "secrets", multiple=True, help="Only this secret (repeatable).")
@click.option("--dry-run", is_flag=True, help="Show what would be recorded; change nothing.")
@click.pass_context
def import_(ctx: click.Context, /, secrets: tuple[str, ...], dry_run: bool, **params: Any) -> None:
    """Record the hashes of values the targets already hold; generate and write nothing (exit 1 when
    a secret's targets disagree or hold nothing)."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        return import_report(actions.import_values(lane.workspace(), actor=cli_actor(),
                                                   secret_names=list(secrets) or None, dry_run=dry_run))

    _finish(ctx, lane, produce)


@cli.command()
@lane_options()
@click.option("--fail-on-warning", is_flag=True, help="Warnings make it non-compliant.")
@click.pass_context
def policy(ctx: click.Context, /, fail_on_warning: bool, **params: Any) -> None:
    """Check rotation, access and compliance policies (exit 2 when not compliant)."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        return policy_report(actions.check_policy(lane.workspace(), actor=cli_actor(), fail_on_warning=fail_on_warning))

    _finish(ctx, lane, produce)


@cli.command()
@lane_options(lockfile=False)
@click.pass_context
def validate(ctx: click.Context, /, **params: Any) -> None:
    """Validate the definition file (exit 2 when it has errors)."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        return validation_report(actions.validate_definition_file(lane.workspace(), actor=cli_actor()))

    _finish(ctx, lane, produce)


@cli.command()
@lane_options(lockfile=False, formats=("yaml", "json"))
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True, path_type=Path), default=None,
              help="Write the rendered definition to this file instead of stdout.")
@click.pass_context
def render(ctx: click.Context, /, output: Path | None, **params: Any) -> None:
    """The definition with its variables and environment applied (static values and environment
    values shown as ***)."""
    lane = _lane(ctx, params)
    as_yaml = lane.output_format == "yaml"
    lane.output_format = "text" if as_yaml else "json"

    def produce() -> Report:
        result = actions.render_config(lane.workspace(), actor=cli_actor())
        text = yaml.safe_dump(result.config, sort_keys=False) if as_yaml else json.dumps(result.config, indent=2)
        if output is None:
            return Report(result.config, text)
        output.write_text(text if text.endswith("\n") else text + "\n")
        return Report({"output": str(output)}, f"Rendered to {output}")

    _finish(ctx, lane, produce)


@cli.group(name="list", cls=Program)
def list_group() -> None:
    """List what the definition declares: secrets, targets, providers, variables."""


@list_group.command("secrets")
@lane_options(lockfile=False)
@click.option("--filter", "name_filter", default=None, help="Only names containing this (case-insensitive).")
@click.pass_context
def list_secrets(ctx: click.Context, /, name_filter: str | None, **params: Any) -> None:
    """The secrets, in definition order."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        rows = [
            {"name": s.name, "kind": s.kind, "one_time": s.one_time, "rotation_period": s.rotation_period,
             "targets_count": len(s.targets),
             "targets": [dict(zip(("provider", "kind"), t.split("/", 1), strict=False)) for t in s.targets]}
            for s in actions.list_secrets(lane.workspace(), actor=cli_actor())
            if not name_filter or name_filter.lower() in s.name.lower()
        ]
        return table_report("secrets", rows, ("NAME", "KIND", "ONE-TIME", "ROTATION", "TARGETS"),
                            lambda r: (r["name"], r["kind"], "yes" if r["one_time"] else "no", r["rotation_period"],
                                       [f"{t['provider']}/{t.get('kind', '')}" for t in r["targets"]]))

    _finish(ctx, lane, produce)


@list_group.command("targets")
@lane_options(lockfile=False)
@click.pass_context
def list_targets(ctx: click.Context, /, **params: Any) -> None:
    """Every secret's targets with their config, the environment's target profile applied."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        config = actions.render_config(lane.workspace(), actor=cli_actor()).config
        rows = [
            {"secret": secret.get("name"), "provider": target.get("provider"), "kind": target.get("kind"),
             "config": target.get("config") or {}}
            for secret in _items(config.get("secrets")) for target in _items(secret.get("targets"))
        ]
        return table_report("targets", rows, ("SECRET", "PROVIDER", "KIND", "CONFIG"),
                            lambda r: (r["secret"], r["provider"], r["kind"], r["config"]))

    _finish(ctx, lane, produce)


@list_group.command("providers")
@lane_options(lockfile=False)
@click.pass_context
def list_providers(ctx: click.Context, /, **params: Any) -> None:
    """The providers the definition declares (credentials shown as ***)."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        _, declared = actions.list_providers(lane.workspace(), actor=cli_actor())
        rows = [{"name": p["alias"], "kind": p["kind"], "auth_kind": p["auth_kind"], "config": p["config"]}
                for p in declared]
        return table_report("providers", rows, ("NAME", "KIND", "AUTH"),
                            lambda r: (r["name"], r["kind"], r["auth_kind"]))

    _finish(ctx, lane, produce)


@list_group.command("variables")
@lane_options(lockfile=False)
@click.option("--filter", "name_filter", default=None, help="Only names containing this (case-insensitive).")
@click.pass_context
def list_variables(ctx: click.Context, /, name_filter: str | None, **params: Any) -> None:
    """The variables after the environment's and the given var files (environment values as ***)."""
    lane = _lane(ctx, params)

    def produce() -> Report:
        variables = actions.render_config(lane.workspace(), actor=cli_actor()).config.get("variables") or {}
        rows = [{"name": name, "value": value} for name, value in variables.items()
                if not name_filter or name_filter.lower() in name.lower()]
        report = table_report("variables", rows, ("NAME", "VALUE"), lambda r: (r["name"], json.dumps(r["value"])))
        report.data = {"variables": {row["name"]: row["value"] for row in rows}, "total": len(rows)}
        return report

    _finish(ctx, lane, produce)


@cli.command()
@click.option("-n", "--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="Rows to show.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True, help="Newest rows to skip.")
@click.option("-a", "--action", default=None, help="Only this action (sync, execute_rotation, ...).")
@click.option("-r", "--resource", default=None, help="Only this resource (secrets, secret:<name>, ...).")
@click.option("-s", "--secret", default=None, help="Only rows naming this secret.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def audit(ctx: click.Context, /, limit: int, offset: int, action: str | None, resource: str | None,
          secret: str | None, output_format: str) -> None:
    """The audit log, newest first (the service's own, which the API serves too)."""
    lane = Lane(None, None, (), None, output_format, True)

    def produce() -> Report:
        # Imported here: the REST framework is 0.2 s of every other subcommand's start.
        from secretsapi.api.serializers.audit import AuditEntrySerializer

        entries = actions.read_audit_logs(actor=cli_actor(), limit=limit, offset=offset, action=action,
                                          resource=resource, secret=secret)
        rows = list(AuditEntrySerializer(entries, many=True).data)
        report = table_report("entries", rows, ("TIME", "USER", "ACTION", "RESOURCE", "OUTCOME"),
                              lambda r: (r["timestamp"], r["user"], r["action"], r["resource"],
                                         "ok" if r["success"] else "failed"))
        # The shape of GET /audit/logs' entries.
        report.data = {"entries": rows, "count": len(rows)}
        return report

    _finish(ctx, lane, produce)


def _items(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def main(prog_name: str = PROG) -> None:
    """The console script's entry point: the program, then the database connection closed."""
    # The process ends with the command: what start-up loaded (Django, the apps, this code)
    # lives until then, so the collector's full passes need not walk it again.
    gc.freeze()
    try:
        cli.main(prog_name=prog_name)
    finally:
        with contextlib.suppress(ImproperlyConfigured, DatabaseError):
            connections.close_all()


__all__ = ["cli", "main"]
