"""``manage.py status``: one secret's status, or every defined secret's (exit 2 if any is missing)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from secretsapi import actions
from secretsapi.management.base import EngineCommand, add_var_file_option, cli_actor, columns, to_the_second
from secretsapi.service.results import SecretStatus

HEADER = ("NAME", "STATE", "CREATED (UTC)", "LAST ROTATED", "ROTATIONS", "NEXT DUE")


def row(st: SecretStatus) -> tuple[str, ...]:
    if not st.exists:
        return (st.name, "not generated", "-", "-", "-", "-")
    # No due date: a one-time secret or one without a rotation period never falls due.
    return (st.name, "generated", to_the_second(st.created_at),
            to_the_second(st.last_rotated) if st.last_rotated else "never", str(st.rotation_count),
            to_the_second(st.due_at) if st.due_at else "never")


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
            statuses = [actions.secret_status(ws, options["name"], actor=cli_actor())]
        else:
            statuses = actions.secret_statuses(ws, actor=cli_actor())
        lines = columns([HEADER, *(row(st) for st in statuses)])
        self.emit(options, statuses if len(statuses) != 1 else statuses[0], "\n".join(lines))
        if not all(st.exists for st in statuses):
            raise self.finding("some secrets are not generated")
