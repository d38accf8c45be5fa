"""The ``secretsctl`` program: SecretZero's subcommands, flags and defaults.

Flags mean what they mean in SecretZero: ``-f`` the definition (default ``SERVICE_CONFIG``, else
``./Secretfile.yml``), ``-l`` the lockfile (relative to the definition's folder; SecretZero's
default ``.gitsecrets.lock`` means "the environment's, or the default"), ``-v`` a variable file
(repeatable, relative to the working folder), ``-e`` the environment, ``-s`` a secret
(repeatable), ``--format text|json`` (``--json`` too). ``-f``, ``-e``, ``-q`` and ``--json`` may
also come before the subcommand. Exit codes are the management commands': 0 clean, 1 error (bad
arguments included), 2 a finding (drift, due, not compliant, invalid, not generated).

Only the declarations are here (Click and the standard library): what each subcommand does is
``secretsapi.cli.operations``, imported with Django when one runs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from secretsapi import __version__
from secretsapi.cli import account, completion
from secretsapi.cli.handover import finish
from secretsapi.cli.program import (
    PROG,
    Program,
    environment_option,
    examples,
    json_option,
    lane,
    lane_options,
    secrets_option,
)
from secretsapi.cli.remote import address
from secretsapi.service.definition.periods import DURATION_UNITS, PeriodError, parse_instant


class Instant(click.ParamType[datetime, Any]):
    """``--since`` / ``--until``: ISO 8601 (UTC without a zone) or a duration ago (``2h``, ``7d``)."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            return parse_instant(str(value), datetime.now(UTC))
        except PeriodError as exc:
            self.fail(str(exc), param, ctx)


@click.group(name=PROG, cls=Program, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=examples(
                 "secretsctl -f Secretfile.yml sync           # generate what is missing, write the targets",
                 "secretsctl -e prod status                   # every secret of the prod environment",
                 "secretsctl drift --json | jq .              # what differs from the lockfile, as JSON",
                 "secretsctl rotate --dry-run                 # which secrets are due (exit 2 when any is)",
                 "secretsctl audit --since 2h --user cli:alice",
                 "secretsctl --addr https://secrets.example.com status   # ask a running service",
                 'eval "$(_SECRETSCTL_COMPLETE=bash_source secretsctl)"   # completion in bash'))
@click.version_option(__version__, prog_name=PROG)
@click.option("-f", "--file", "file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Definition file for every subcommand (default: SERVICE_CONFIG, else ./Secretfile.yml).")
@environment_option()
@click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar.")
@json_option()
@click.option("-n", "--non-interactive", is_flag=True, default=False,
              help="Accepted for SecretZero's scripts: secretsctl never prompts.")
@click.option("--addr", "addr", envvar=address.ADDR_ENV, default=None, metavar="URL",
              help="A running service (https://host): every subcommand runs there, with the key of "
                   "SECRETSCTL_API_KEY or `secretsctl login` (env: SECRETSCTL_ADDR; none: local files).")
@click.option("--project", "project", envvar=address.PROJECT_ENV, default=None, metavar="NAME",
              help="With --addr: the service's project to work on (env: SECRETSCTL_PROJECT).")
@click.option("--ca-bundle", "ca_bundle", envvar=address.CA_BUNDLE_ENV, default=None, metavar="PATH",
              help="With --addr: verify the service's TLS certificate with this CA bundle "
                   "(env: SECRETSCTL_CA_BUNDLE).")
def cli(file: Path | None, environment: str | None, quiet: bool, as_json: bool, non_interactive: bool,
        addr: str | None, project: str | None, ca_bundle: str | None) -> None:
    """Secrets orchestration: SecretZero's command line over this service.

    Exit codes: 0 clean, 1 error, 2 a finding (drift, rotation due, not compliant, invalid,
    not generated); 3 the service at --addr could not be reached; 141 when the reader of the
    output went away (| head).
    """


@cli.command(epilog=examples("secretsctl sync", "secretsctl sync -e prod --dry-run",
                             "secretsctl sync -s db_password -s api_key --json",
                             "secretsctl sync --repair          # also put recorded values back into targets"))
@lane_options()
@click.option("--dry-run", "--plan", "dry_run", is_flag=True, help="Show what would be done; write nothing.")
@secrets_option()
@click.option("--force", is_flag=True, help="Regenerate existing secrets too.")
@click.option("--repair", is_flag=True, help="Also put recorded values back into targets that hold another value.")
@click.option("--refresh", is_flag=True, help="First drop recorded target ids the definition no longer names.")
@click.option("--no-prompt", is_flag=True, help="Accepted for SecretZero's scripts: secretsctl never prompts.")
@click.pass_context
def sync(ctx: click.Context, /, dry_run: bool, secrets: tuple[str, ...], force: bool, repair: bool, refresh: bool,
         no_prompt: bool, **params: Any) -> None:
    """Generate secrets that do not exist yet and write them to their targets."""
    finish(ctx, lane(ctx, params), "sync", dry_run=dry_run, secrets=secrets, force=force, repair=repair,
           refresh=refresh)


@cli.command(epilog=examples("secretsctl rotate                  # rotate what is due",
                             "secretsctl rotate --dry-run        # only report what is due (exit 2 when any is)",
                             "secretsctl rotate db_password --force"))
@click.argument("secret_name", required=False, shell_complete=completion.secrets)
@lane_options()
@secrets_option()
@click.option("--force", is_flag=True, help="Rotate even if not due.")
@click.option("--dry-run", is_flag=True, help="Only report which secrets are due (exit 2 when any is).")
@click.pass_context
def rotate(ctx: click.Context, /, secret_name: str | None, secrets: tuple[str, ...], force: bool, dry_run: bool,
           **params: Any) -> None:
    """Rotate the secrets that are due (all named ones with --force); --dry-run only reports."""
    finish(ctx, lane(ctx, params), "rotate", secret_name=secret_name, secrets=secrets, force=force, dry_run=dry_run)


@cli.command(epilog=examples("secretsctl status", "secretsctl status -s db_password --json",
                             "secretsctl -e prod status -v      # with each secret's target ids"))
@lane_options(var_file_short=False)
@secrets_option()
@click.option("-v", "--verbose", "--detailed", "verbose", is_flag=True, help="Also list each secret's target ids.")
@click.pass_context
def status(ctx: click.Context, /, secrets: tuple[str, ...], verbose: bool, **params: Any) -> None:
    """Whether each secret exists, when it was created and rotated, when it falls due (exit 2 if any
    is not generated; exit 1 for a name the definition does not declare)."""
    finish(ctx, lane(ctx, params), "status", secrets=secrets, verbose=verbose)


@cli.command(epilog=examples("secretsctl show db_password", "secretsctl show db_password --json"))
@click.argument("secret_name", shell_complete=completion.secrets)
@lane_options()
@click.option("-d", "--detailed", is_flag=True, help="Accepted for SecretZero's scripts: every detail is shown.")
@click.pass_context
def show(ctx: click.Context, /, secret_name: str, detailed: bool, **params: Any) -> None:
    """One secret: its definition and what the lockfile records (never its value)."""
    finish(ctx, lane(ctx, params), "show", secret_name=secret_name)


@cli.command(epilog=examples("secretsctl drift", "secretsctl drift db_password --json"))
@click.argument("secret_name", required=False, shell_complete=completion.secrets)
@lane_options()
@click.pass_context
def drift(ctx: click.Context, /, secret_name: str | None, **params: Any) -> None:
    """Compare the targets with the lockfile (exit 2 on drift)."""
    finish(ctx, lane(ctx, params), "drift", secret_name=secret_name)


@cli.command(epilog=examples("secretsctl clean --dry-run", "secretsctl clean"))
@lane_options()
@click.option("--dry-run", is_flag=True, help="List the entries of secrets no longer defined; remove nothing.")
@click.pass_context
def clean(ctx: click.Context, /, dry_run: bool, **params: Any) -> None:
    """Remove the lockfile entries of secrets the definition no longer declares."""
    finish(ctx, lane(ctx, params), "clean", dry_run=dry_run)


@cli.command("import", epilog=examples("secretsctl import --dry-run", "secretsctl import -s db_password"))
@lane_options()
@secrets_option()
@click.option("--dry-run", is_flag=True, help="Show what would be recorded; change nothing.")
@click.pass_context
def import_(ctx: click.Context, /, secrets: tuple[str, ...], dry_run: bool, **params: Any) -> None:
    """Record the hashes of values the targets already hold; generate and write nothing (exit 1 when
    a secret's targets disagree or hold nothing)."""
    finish(ctx, lane(ctx, params), "import", secrets=secrets, dry_run=dry_run)


@cli.command(epilog=examples("secretsctl policy", "secretsctl policy --fail-on-warning --json"))
@lane_options()
@click.option("--fail-on-warning", is_flag=True, help="Warnings make it non-compliant.")
@click.pass_context
def policy(ctx: click.Context, /, fail_on_warning: bool, **params: Any) -> None:
    """Check rotation, access and compliance policies (exit 2 when not compliant)."""
    finish(ctx, lane(ctx, params), "policy", fail_on_warning=fail_on_warning)


@cli.command(epilog=examples("secretsctl validate", "secretsctl validate -f other/Secretfile.yml -v prod.yml"))
@lane_options(lockfile=False)
@click.pass_context
def validate(ctx: click.Context, /, **params: Any) -> None:
    """Validate the definition file (exit 2 when it has errors)."""
    finish(ctx, lane(ctx, params), "validate")


@cli.command(epilog=examples("secretsctl render", "secretsctl render -e prod --format json -o rendered.json"))
@lane_options(lockfile=False, formats=("yaml", "json"))
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True, path_type=Path), default=None,
              help="Write the rendered definition to this file instead of stdout.")
@click.pass_context
def render(ctx: click.Context, /, output: Path | None, **params: Any) -> None:
    """The definition with its variables and environment applied (static values and environment
    values shown as ***)."""
    where = lane(ctx, params)
    as_yaml = where.output_format == "yaml"
    where.output_format = "text" if as_yaml else "json"
    finish(ctx, where, "render", output=output, as_yaml=as_yaml)


@cli.group(name="list", cls=Program, epilog=examples("secretsctl list secrets --filter db",
                                                      "secretsctl list targets -e prod --json"))
def list_group() -> None:
    """List what the definition declares: secrets, targets, providers, variables."""


@list_group.command("secrets", epilog=examples("secretsctl list secrets", "secretsctl list secrets --filter db --json"))
@lane_options(lockfile=False)
@click.option("--filter", "name_filter", default=None, help="Only names containing this (case-insensitive).")
@click.pass_context
def list_secrets(ctx: click.Context, /, name_filter: str | None, **params: Any) -> None:
    """The secrets, in definition order."""
    finish(ctx, lane(ctx, params), "list_secrets", name_filter=name_filter)


@list_group.command("targets", epilog=examples("secretsctl list targets", "secretsctl list targets -e prod --json"))
@lane_options(lockfile=False)
@click.pass_context
def list_targets(ctx: click.Context, /, **params: Any) -> None:
    """Every secret's targets with their config, the environment's target profile applied."""
    finish(ctx, lane(ctx, params), "list_targets")


@list_group.command("providers", epilog=examples("secretsctl list providers",
                                                  "secretsctl list providers --json"))
@lane_options(lockfile=False)
@click.pass_context
def list_providers(ctx: click.Context, /, **params: Any) -> None:
    """The providers the definition declares (credentials shown as ***)."""
    finish(ctx, lane(ctx, params), "list_providers")


@list_group.command("variables", epilog=examples("secretsctl list variables -e prod",
                                                  "secretsctl list variables --filter db -v extra.yml"))
@lane_options(lockfile=False)
@click.option("--filter", "name_filter", default=None, help="Only names containing this (case-insensitive).")
@click.pass_context
def list_variables(ctx: click.Context, /, name_filter: str | None, **params: Any) -> None:
    """The variables after the environment's and the given var files (environment values as ***)."""
    finish(ctx, lane(ctx, params), "list_variables", name_filter=name_filter)


@cli.command(epilog=examples("secretsctl audit -n 20", "secretsctl audit --since 2h --user cli:alice",
                             "secretsctl audit -a sync --since 2026-01-01 --until 2026-02-01 --json",
                             "secretsctl audit --follow          # then each new row, until Ctrl-C"))
@click.option("-n", "--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="Rows to show.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True, help="Newest rows to skip.")
@click.option("-a", "--action", default=None, help="Only this action (sync, execute_rotation, ...).")
@click.option("-r", "--resource", default=None, help="Only this resource (secrets, secret:<name>, ...).")
@click.option("-s", "--secret", default=None, shell_complete=completion.secrets, help="Only rows naming this secret.")
@click.option("-u", "--user", default=None, help="Only rows of this user (service, a key's name, cli:alice, ...).")
@click.option("--since", type=Instant(), default=None,
              help=f"Rows at or after this time: ISO 8601 (UTC without a zone) or a duration ago, {DURATION_UNITS} "
                   "(2h, 30min, 7d).")
@click.option("--until", type=Instant(), default=None, help="Rows before this time (the same forms as --since).")
@click.option("--follow", is_flag=True, help="Show the last rows oldest first, then each new one as it is "
                                              "written (JSON lines with --json), until Ctrl-C.")
@click.option("--interval", type=click.FloatRange(0.1, 3600), default=2.0, show_default=True,
              help="With --follow: seconds between looks for new rows.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
@json_option()
@click.pass_context
def audit(ctx: click.Context, /, limit: int, offset: int, action: str | None, resource: str | None,
          secret: str | None, user: str | None, since: datetime | None, until: datetime | None, follow: bool,
          interval: float, output_format: str, as_json: bool) -> None:
    """The audit log, newest first (the service's own, which the API serves too)."""
    where = lane(ctx, {"file": None, "environment": None, "output_format": output_format, "as_json": as_json,
                       "quiet": True})
    filters = {"action": action, "resource": resource, "secret": secret, "user": user, "since": since,
               "until": until}
    if follow:
        if offset:
            raise click.UsageError("--follow starts from the newest rows: it takes no --offset", ctx)
        finish(ctx, where, "audit_follow", limit=limit, interval=interval, **filters)
    finish(ctx, where, "audit", limit=limit, offset=offset, **filters)


for command in (account.login, account.logout, account.whoami):
    cli.add_command(command)

__all__ = ["cli"]
