"""``manage.py status``: one secret's status, or every defined secret's (exit 2 if any is missing)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi.actions import secret_reads
from secretsapi.management import reports
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor, require_declared


class Command(EngineCommand):
    help = "Show whether secrets exist, when they were created and rotated and when they fall due; " \
           "exit 2 if any is missing."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        add_var_file_option(parser)
        parser.add_argument("name", nargs="?", help="Secret name (default: every defined secret).")

    def handle(self, *args: Any, **options: Any) -> None:
        ws = self.workspace(options)
        if options["name"]:
            statuses = [secret_reads.secret_status(ws, options["name"], actor=cli_actor())]
            require_declared(ws, [st.name for st in statuses if not st.exists])
        else:
            statuses = secret_reads.secret_statuses(ws, actor=cli_actor())
        self.report(options, reports.status_report(statuses, single=True))
