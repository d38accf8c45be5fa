"""``manage.py drift``: compare targets with the lockfile (exit 2 on drift)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi import actions
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor, columns


class Command(EngineCommand):
    help = "Report drift between the lockfile and the targets; exit 2 when there is any."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        add_var_file_option(parser)
        parser.add_argument("--secret", dest="secret_name", help="Only this secret.")

    def handle(self, *args: Any, **options: Any) -> None:
        result = actions.check_drift(self.workspace(options), actor=cli_actor(), secret_name=options["secret_name"])
        lines = ["Drift found." if result.has_drift else "No drift."]
        lines += columns([(d.secret, f"{d.details.get('reason')}: {d.details.get('target')}") for d in result.details])
        self.emit(options, result, "\n".join(lines))
        if result.has_drift:
            raise self.finding(f"drift in {len(result.secrets_with_drift)} secret(s)")
