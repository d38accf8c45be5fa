"""``manage.py clean``: remove lockfile entries of secrets the definition no longer has (SecretZero's ``clean``)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi.actions import writes
from secretsapi.management import reports
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor


class Command(EngineCommand):
    help = "Remove lockfile entries that have no secret in the definition."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--dry-run", action="store_true", help="Show the orphaned entries; remove nothing.")
        add_var_file_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        result = writes.clean_lockfile(self.workspace(options), actor=cli_actor(), dry_run=options["dry_run"])
        self.report(options, reports.clean_report(result))
