"""``manage.py drift``: compare targets with the lockfile (exit 2 on drift)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi.actions import checks
from secretsapi.management import reports
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor


class Command(EngineCommand):
    help = "Report drift between the lockfile and the targets; exit 2 when there is any."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        add_var_file_option(parser)
        parser.add_argument("--secret", dest="secret_name", help="Only this secret.")

    def handle(self, *args: Any, **options: Any) -> None:
        result = checks.check_drift(self.workspace(options), actor=cli_actor(), secret_name=options["secret_name"])
        self.report(options, reports.drift_report(result))
