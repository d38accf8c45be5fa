"""``manage.py status``: one secret's status, or every defined secret's (exit 2 if any is missing)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi import actions
from secretsapi.management import reports
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor


class Command(EngineCommand):
    help = "Show whether secrets exist, when they were created and rotated and when they fall due; " \
           "exit 2 if any is missing."

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        add_var_file_option(parser)
        parser.add_argument("name", nargs="?", help="Secret name (default: every defined secret).")

    def handle(self, *args: Any, **options: Any) -> None:
        ws = self.workspace(options)
        names = [options["name"]] if options["name"] else [s.name for s in actions.list_secrets(ws, actor=cli_actor())]
        statuses = [actions.secret_status(ws, name, actor=cli_actor()) for name in names]
        self.report(options, reports.status_report(statuses, single=len(names) == 1))
