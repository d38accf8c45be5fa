"""``manage.py audit``: export the audit log (JSON lines, JSON or CSV), oldest first; ``--follow`` tails it."""

from __future__ import annotations

from argparse import ArgumentParser, ArgumentTypeError
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from audit.export import AuditFilter, csv_lines, json_array, jsonl
from secretsapi.actions import auditlog
from secretsapi.management.base import EngineCommand, Failure, cli_actor
from secretsapi.service.definition import periods

FORMATS = {"jsonl": jsonl, "json": json_array, "csv": csv_lines}


def instant(text: str) -> datetime:
    """ISO 8601 (without a zone it is UTC, as in ``GET /audit/logs``), or a duration ago (``2h``)."""
    try:
        return periods.parse_instant(text, datetime.now(UTC))
    except periods.PeriodError as exc:
        raise ArgumentTypeError(str(exc)) from None


def outcome(text: str) -> bool:
    if text not in ("true", "false"):
        raise ArgumentTypeError("must be true or false")
    return text == "true"


class Command(EngineCommand):
    help = ("Write every matching audit row to stdout, oldest first, as JSON lines (default), one JSON "
            "array or CSV; with --follow, then every new row as it is written, until interrupted.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        # Not the engine's options: the audit log is in the database, not beside a definition.
        parser.add_argument("--format", choices=sorted(FORMATS), default="jsonl", help="Output format.")
        parser.add_argument("--since", type=instant, help="Rows at or after this time: ISO 8601 (UTC without a "
                                                          "zone), or a duration ago (2h, 30min, 7d).")
        parser.add_argument("--until", type=instant, help="Rows before this time: ISO 8601 (UTC without a zone), "
                                                          "or a duration ago.")
        parser.add_argument("--action", help="Only this action (sync, rotate_secrets, ...).")
        parser.add_argument("--resource", help="Only this resource (secrets, secret:<name>, ...).")
        parser.add_argument("--user", help="Only rows of this user (service, a key's name, cli:alice, ...).")
        parser.add_argument("--secret", help="Every row about this secret, bulk operations naming it included.")
        parser.add_argument("--project", help="Only rows of this service project (default: SERVICE_CONFIG's).")
        parser.add_argument("--success", type=outcome, help="Only rows with this outcome: true or false.")
        parser.add_argument("--follow", action="store_true",
                            help="After the existing rows, print each new one as it is written (Ctrl-C ends).")
        parser.add_argument("--interval", type=float, default=2.0,
                            help="With --follow: seconds between looks for new rows (default 2).")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["follow"] and options["format"] == "json":
            raise Failure("usage", "--follow writes JSON lines or CSV: a JSON array has no end to wait for")
        if options["interval"] <= 0:
            raise Failure("usage", "--interval must be a positive number of seconds")
        where = AuditFilter(**{k: options[k] for k in ("action", "resource", "success", "user", "since", "until",
                                                          "secret", "project")})
        rows = auditlog.export_audit_logs(actor=cli_actor(), where=where,
                                          follow_every=options["interval"] if options["follow"] else None)
        self._write(FORMATS[options["format"]](rows))

    def _write(self, chunks: Iterator[str]) -> None:
        # A row at a time, flushed: a follower's reader (a pipe to a shipper) sees each row at once.
        for chunk in chunks:
            self.stdout.write(chunk, ending="")
            self.stdout.flush()
