"""``manage.py rotate``: report which secrets are due, or rotate them with --execute."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi.actions import checks, writes
from secretsapi.management import reports
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor


class Command(EngineCommand):
    help = "Check rotation (exit 2 when any secret is due); --execute rotates due secrets."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        add_var_file_option(parser)
        parser.add_argument("--execute", action="store_true", help="Rotate the secrets that are due.")
        parser.add_argument("--force", action="store_true", help="With --execute: rotate even if not due.")
        parser.add_argument("--secret", dest="secret_name", help="Only this secret.")

    def handle(self, *args: Any, **options: Any) -> None:
        ws = self.workspace(options)
        if options["execute"] or options["force"]:
            result = writes.execute_rotation(
                ws, actor=cli_actor(), secret_name=options["secret_name"], force=options["force"]
            )
            self.report(options, reports.rotation_report(result))
            return
        check = checks.check_rotation(ws, actor=cli_actor(), secret_name=options["secret_name"])
        self.report(options, reports.rotation_check_report(check))
