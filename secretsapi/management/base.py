"""Shared shape of the engine commands: --definition, --lockfile, --json, CI exit codes, no tracebacks.

Every engine command migrates a fresh database first (as ``serve`` does, under the same lock)
and turns every failure into one line (or, under ``--json``, ``{"error", "detail"}`` on stdout)
with exit code 1; a finding (drift, not compliant, rotation due, ...) prints the result and
exits 2. Only unexpected exceptions are logged with their traceback, at debug level.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import getpass
import json
import logging
import sys
from argparse import ArgumentParser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError, OutputWrapper, handle_default_options
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor

from projects import current as current_project
from projects import registry
from secretsapi.actions import secret_reads, workspaces
from secretsapi.database_locks import migration_lock
from secretsapi.management.checks import PagelessCommand

# Also where the commands and their tests import these from.
from secretsapi.management.output import EXIT_ERROR as EXIT_ERROR
from secretsapi.management.output import EXIT_FINDING as EXIT_FINDING
from secretsapi.management.output import Failure as Failure
from secretsapi.management.output import columns as columns
from secretsapi.management.output import error_json as error_json
from secretsapi.management.output import to_the_second as to_the_second
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound, SecretNotDefined, ServiceError

logger = logging.getLogger("secretsapi.management")


ENVIRONMENT_HELP = ("Environment: a key of the definition's environments.profiles; its var files, lockfile "
                    "and target_profile apply (default: environments.default).")


def say(log: logging.Logger, level: int, text: str, stream: OutputWrapper) -> None:
    """What a long-running command (serve, worker) says about itself: under SERVICE_LOG_FORMAT=json
    a record of ``log`` (one JSON line, like every other line of the process); else ``text`` as
    written to ``stream``."""
    if settings.SERVICE_LOG_FORMAT == "json":
        log.log(level, " ".join(line.strip(" *") for line in text.splitlines() if line.strip(" *")))
    else:
        stream.write(text)


def cli_actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli:unknown"


def require_declared(ws: workspaces.Workspace, names: Sequence[str]) -> None:
    """A named secret the lockfile lacks is "not generated" (a finding) only if the definition
    declares it; otherwise it is not defined (exit 1, with the closest declared name), as every
    operation that names a secret says. Without a readable definition the lockfile's word stands."""
    if not names:
        return
    try:
        declared = [s.name for s in secret_reads.list_secrets(ws, actor=cli_actor())]
    except (DefinitionNotFound, DefinitionInvalid):
        return
    for name in names:
        if name not in declared:
            raise SecretNotDefined(name, declared)


def add_var_file_option(parser: ArgumentParser) -> None:
    """``--var-file``, repeatable, as ``sync`` takes it: the operation renders the definition with them."""
    parser.add_argument("--var-file", action="append", default=[], dest="var_files",
                        help="Variable file relative to the definition's folder (repeatable).")


def pending_migrations(alias: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether the database lacks a migration: one query on the migration table (a few ms)."""
    executor = MigrationExecutor(connections[alias])
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def migrate_pending(alias: str = DEFAULT_DB_ALIAS) -> None:
    """Apply unapplied migrations, quietly, under ``migration_lock``; nothing when there are none.

    Of several processes starting on a fresh database exactly one migrates; the others wait
    for the lock, then find nothing to do.
    """
    if pending_migrations(alias):
        with migration_lock(alias=alias):
            call_command("migrate", database=alias, interactive=False, verbosity=0)


def in_project(definition: Path | None) -> contextlib.AbstractContextManager[None]:
    """A run on ``definition`` (a ``--definition``/``-f`` path) in the added project it is the
    definition of, so its audit rows, metrics and events name that project; any other file (or
    none: SERVICE_CONFIG's) runs in the default project, as before."""
    found = registry.serving(definition) if definition is not None else None
    return current_project.using(found) if found is not None else contextlib.nullcontext()


def as_failure(exc: BaseException) -> Failure:
    """Every exception as a Failure: expected ones keep their message, others get a generic one."""
    if isinstance(exc, Failure):
        return exc
    if isinstance(exc, ServiceError):
        return Failure(exc.code, exc.message)
    if isinstance(exc, CommandError):
        return Failure("usage" if str(exc).startswith("Error: ") else "command_error",
                       _one_line(str(exc).removeprefix("Error: ")), returncode=exc.returncode)
    if isinstance(exc, DatabaseError):
        logger.debug("database error", exc_info=exc)
        return Failure("database_error", f"database error: {_one_line(str(exc))}")
    if isinstance(exc, ImproperlyConfigured):
        return Failure("configuration_error", f"configuration error: {_one_line(str(exc))}")
    if isinstance(exc, OSError):
        return Failure("os_error", _one_line(str(exc)))
    logger.debug("unexpected error", exc_info=exc)
    return Failure("internal_error", f"unexpected error ({type(exc).__name__}); "
                                     "run with --traceback, or SERVICE_LOG_LEVEL=debug, for details")


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "no detail"


class EngineCommand(PagelessCommand):
    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--definition", type=Path, help="Definition file (default: SERVICE_CONFIG).")
        parser.add_argument(
            "--lockfile", type=Path, help="Lockfile (default: SERVICE_LOCKFILE, else beside the definition)."
        )
        parser.add_argument("--json", action="store_true", help="Print the result (or the error) as JSON.")
        parser.add_argument("-e", "--env", "--environment", dest="environment", help=ENVIRONMENT_HELP)

    def workspace(self, options: dict[str, Any], var_files: list[str] | None = None) -> workspaces.Workspace:
        """Commands that take ``--var-file`` (``add_var_file_option``) get theirs from ``options``."""
        return workspaces.workspace(
            definition=options.get("definition"), lockfile=options.get("lockfile"),
            var_files=var_files or options.get("var_files") or (), environment=options.get("environment"),
            command_line=True,
        )

    def report(self, options: dict[str, Any], report: Any) -> None:
        """Print a ``reports.Report`` (JSON under ``--json``), then exit as it says."""
        self.emit(options, report.data if options.get("json") else None, report.text)
        if report.problem is not None:
            raise report.problem

    def run_from_argv(self, argv: list[str]) -> None:
        """Django's, but every failure (bad arguments included) is one line or JSON, exit 1."""
        self._called_from_command_line = True
        as_json = "--json" in argv[2:]
        show_traceback = "--traceback" in argv[2:]
        try:
            parser = self.create_parser(argv[0], argv[1])
            # argparse's own exit code for bad arguments is 2, which here means a finding.
            parser.called_from_command_line = False
            options = parser.parse_args(argv[2:])
            cmd_options = vars(options)
            args = cmd_options.pop("args", ())
            handle_default_options(options)
            # The process ends with the command: what start-up loaded (Django, the apps, this
            # code) lives until then, so the collector's full passes need not walk it again.
            gc.freeze()
            self.execute(*args, **cmd_options)
        except KeyboardInterrupt:
            self.stderr.write("interrupted")
            sys.exit(130)
        except Exception as exc:
            if show_traceback:
                raise
            failure = as_failure(exc)
            if as_json:
                if not failure.emitted:
                    self.stdout.write(error_json(failure))
            else:
                self.stderr.write(("" if failure.returncode == EXIT_FINDING else "Error: ") + failure.detail)
            sys.exit(failure.returncode)
        finally:
            with contextlib.suppress(ImproperlyConfigured, DatabaseError):
                connections.close_all()
            # Only the command line comes here (call_command does not): the process ends next.
            workspaces.release_caches()

    def execute(self, *args: Any, **options: Any) -> Any:
        """Migrate a fresh database, run the command; every failure leaves as a ``Failure``.

        Under ``--json`` the failure's JSON is printed here (so ``call_command`` sees it too).
        """
        # Django's execute sets these too, but the migration (which may fail) comes first.
        if options.get("stdout"):
            self.stdout = OutputWrapper(options["stdout"])
        try:
            migrate_pending(options.get("database") or DEFAULT_DB_ALIAS)
            with in_project(options.get("definition")):
                return super().execute(*args, **options)
        except Exception as exc:
            if options.get("traceback") and not isinstance(exc, CommandError | ServiceError):
                raise
            failure = as_failure(exc)
            if options.get("json") and not failure.emitted:
                self.stdout.write(error_json(failure))
                failure.emitted = True
            raise failure from None

    def emit(self, options: dict[str, Any], result: Any, text: str) -> None:
        if options.get("json"):
            data = _plain(result)
            self.stdout.write(json.dumps(data, indent=2, default=str))
        else:
            self.stdout.write(text)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
