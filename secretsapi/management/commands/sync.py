"""``manage.py sync``: generate missing secrets (or all, with --force) and store them."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi.actions import writes
from secretsapi.management import reports
from secretsapi.management.base import EngineCommand, cli_actor


class Command(EngineCommand):
    help = "Generate secrets that do not exist yet and write them to their targets."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--dry-run", action="store_true", help="Show what would be generated; write nothing.")
        parser.add_argument("--force", action="store_true", help="Regenerate existing secrets too.")
        parser.add_argument("--repair", action="store_true",
                            help="Also put recorded values back into targets that hold another value "
                                 "(a plain sync completes missing and new targets).")
        parser.add_argument("--refresh", action="store_true",
                            help="First drop recorded target ids the definition no longer names.")
        parser.add_argument("--secret", dest="secret_name", help="Sync only this secret.")
        parser.add_argument("--var-file", action="append", default=[], dest="var_files",
                            help="Variable file relative to the definition's folder (repeatable).")

    def handle(self, *args: Any, **options: Any) -> None:
        result = writes.sync(
            self.workspace(options, options["var_files"]), actor=cli_actor(),
            dry_run=options["dry_run"], force=options["force"], secret_name=options["secret_name"],
            repair=options["repair"], refresh=options["refresh"],
        )
        self.report(options, reports.sync_report(result))
