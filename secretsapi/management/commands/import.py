"""``manage.py import``: record the hashes of values already in targets (SecretZero's ``import``)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi.actions import writes
from secretsapi.management import reports
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor


class Command(EngineCommand):
    help = "Record in the lockfile the values targets already hold; generates and writes nothing."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--dry-run", action="store_true", help="Show what would be recorded; change nothing.")
        parser.add_argument("--secret", action="append", default=[], dest="secret_names",
                            help="Import only this secret (repeatable).")
        add_var_file_option(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        result = writes.import_values(self.workspace(options), actor=cli_actor(),
                                      secret_names=options["secret_names"] or None, dry_run=options["dry_run"])
        self.report(options, reports.import_report(result))
