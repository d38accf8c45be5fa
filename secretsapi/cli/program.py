"""What every ``secretsctl`` subcommand shares: the group's behaviour (suggestions, exit codes, a
reader that goes away), the flags of a lane (``-f``, ``-e``, ``-v``, ``-l``, ``--format``,
``--json``, ``-q``) and the hand-over to the operations.

Only Click and the standard library are imported here: ``--help``, ``--version`` and shell
completion never start Django. The operations (``secretsapi.cli.operations``) are imported,
with Django set up, when a subcommand runs.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import itertools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from secretsapi.cli import completion

PROG = "secretsctl"
# SecretZero's lockfile flag default: given as is, it names no lockfile of its own.
SECRETZERO_DEFAULT_LOCKFILE = ".gitsecrets.lock"
EXIT_ERROR = 1
# --addr: the service could not be reached (refused, timed out, TLS): not the operation's failure.
EXIT_UNREACHABLE = 3
INTERRUPTED = 130
# A reader that went away (``secretsctl audit | head``): the code of a process SIGPIPE ended.
BROKEN_PIPE = 128 + 13
ENVIRONMENT_HELP = ("Environment: a key of the definition's environments.profiles; its var files, lockfile "
                    "and target_profile apply (default: environments.default).")


class ReaderGone(Exception):
    """Standard output's reader went away (a broken pipe). Not an OSError, so that Click passes it
    on to ``main`` rather than answering it with exit 1."""


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

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        with _reader_gone():  # --help and --version print while the arguments are parsed
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _reader_gone():
            return super().invoke(ctx)

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
            if json_wanted(argv):
                click.echo(json.dumps({"error": "usage", "detail": exc.format_message()}, indent=2))
            else:
                exc.show()
            sys.exit(EXIT_ERROR)
        except click.Abort:
            click.echo("interrupted", err=True)
            sys.exit(INTERRUPTED)
        sys.exit(code if isinstance(code, int) else 0)


@contextlib.contextmanager
def _reader_gone() -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise ReaderGone from exc
        raise


def examples(*lines: str) -> str:
    """A subcommand's epilog: its examples, kept as written (``\\b`` stops Click rewrapping them)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def json_wanted(argv: Sequence[str]) -> bool:
    return ("--json" in argv or "--format=json" in argv
            or any(a == "--format" and b == "json" for a, b in itertools.pairwise(argv)))


@dataclass
class Lane:
    """Where a subcommand runs: what its flags (and the group's) name."""

    file: Path | None
    lockfile: str | None
    var_files: tuple[str, ...]
    environment: str | None
    output_format: str
    quiet: bool


def lane_options(*, var_file_short: bool = True, lockfile: bool = True, formats: Sequence[str] = ("text", "json"),
                 ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``-f``, ``-e``, ``-v``, ``-l``, ``--format``, ``--json`` and ``-q`` as SecretZero's subcommands
    take them (``--json`` is ``--format json``, as ``manage.py`` spells it); ``var_file_short=False``
    where SecretZero gives ``-v`` another meaning (``status --verbose``)."""
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        click.option("-f", "--file", "file", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Definition file (default: SERVICE_CONFIG, else ./Secretfile.yml)."),
        environment_option(),
        click.option(*(("-v", "--var-file") if var_file_short else ("--var-file",)), "var_files", multiple=True,
                     type=click.Path(dir_okay=False),
                     help="Variable file to merge, from the working folder (repeatable; later files win)."),
        click.option("--format", "output_format", type=click.Choice(list(formats)), default=formats[0],
                     show_default=True, help="Output format."),
        json_option(),
        click.option("-q", "--quiet", is_flag=True, default=False, help="No progress bar."),
    ]
    if lockfile:
        options.append(click.option("-l", "--lockfile", "lockfile", default=None, type=click.Path(dir_okay=False),
                                    help="Lockfile, relative to the definition's folder (default: the "
                                         "environment's, else .gitsecrets.lock / <stem>.lock beside it)."))

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def environment_option() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("-e", "--environment", "--env", "environment", default=None, help=ENVIRONMENT_HELP,
                        shell_complete=completion.environments)


def json_option() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--json", "as_json", is_flag=True, default=False, help="Same as --format json.")


def secrets_option() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("-s", "--secret", "secrets", multiple=True, shell_complete=completion.secrets,
                        help="Only this secret (repeatable).")


def lane(ctx: click.Context, /, params: dict[str, Any]) -> Lane:
    """The subcommand's flags, falling back to those given before it."""
    group = ctx.find_root().params
    as_json = params.pop("as_json", False) or bool(group.get("as_json"))
    return Lane(
        file=params.pop("file") or group.get("file"),
        lockfile=params.pop("lockfile", None),
        var_files=tuple(params.pop("var_files", ())),
        environment=params.pop("environment") or group.get("environment"),
        output_format="json" if as_json else params.pop("output_format"),
        quiet=params.pop("quiet") or bool(group.get("quiet")),
    )
