"""Shared shape of the engine commands: --definition, --lockfile, --json, CI exit codes."""

from __future__ import annotations

import dataclasses
import getpass
import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from secretsapi import actions
from secretsapi.service.errors import ServiceError

# Exit codes: 0 clean, 1 error, 2 a finding (drift, not compliant, rotation due, not generated).
EXIT_ERROR = 1
EXIT_FINDING = 2


def cli_actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli:unknown"


def add_var_file_option(parser: ArgumentParser) -> None:
    """``--var-file``, repeatable, as ``sync`` takes it: the operation renders the definition with them."""
    parser.add_argument("--var-file", action="append", default=[], dest="var_files",
                        help="Variable file relative to the definition's folder (repeatable).")


class EngineCommand(BaseCommand):
    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--definition", type=Path, help="Definition file (default: SERVICE_CONFIG).")
        parser.add_argument(
            "--lockfile", type=Path, help="Lockfile (default: SERVICE_LOCKFILE, else beside the definition)."
        )
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def workspace(self, options: dict[str, Any], var_files: list[str] | None = None) -> actions.Workspace:
        """Commands that take ``--var-file`` (``add_var_file_option``) get theirs from ``options``."""
        return actions.workspace(
            definition=options.get("definition"), lockfile=options.get("lockfile"),
            var_files=var_files or options.get("var_files") or (),
        )

    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute(*args, **options)
        except ServiceError as exc:
            raise CommandError(exc.message, returncode=EXIT_ERROR) from None

    def emit(self, options: dict[str, Any], result: Any, text: str) -> None:
        if options.get("json"):
            data = _plain(result)
            self.stdout.write(json.dumps(data, indent=2, default=str))
        else:
            self.stdout.write(text)

    @staticmethod
    def finding(message: str) -> CommandError:
        return CommandError(message, returncode=EXIT_FINDING)

    @staticmethod
    def failure(message: str) -> CommandError:
        return CommandError(message, returncode=EXIT_ERROR)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
