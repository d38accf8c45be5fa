"""``manage.py validate``: validate the definition file (exit 2 when invalid)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi.actions import checks
from secretsapi.management import reports
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor


class Command(EngineCommand):
    help = "Validate the definition file; exit 2 when it has errors."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        add_var_file_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        report = checks.validate_definition_file(self.workspace(options), actor=cli_actor())
        self.report(options, reports.validation_report(report))
