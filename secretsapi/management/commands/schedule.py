"""``manage.py schedule``: the schedules as the workers run them, with their last and next runs."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from datetime import datetime
from typing import Any

from jobs import schedules
from secretsapi.management.checks import PagelessCommand


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class Command(PagelessCommand):
    help = ("List the schedules (rotation, drift) as the job workers run them: the cron expression a worker "
            "installed from its settings, the last run and the next run.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true", help="Machine-readable output.")

    def handle(self, *args: Any, **options: Any) -> None:
        rows = [{"name": s.name, "setting": s.setting, "cron": s.cron or "off", "last_run": _time(s.last_run),
                 "last_state": s.last_state, "next_run": _time(s.next_run)} for s in schedules.states()]
        if options["json"]:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        for row in rows:
            last = f"{row['last_run']} ({row['last_state']})" if row["last_run"] else "never"
            upcoming = row["next_run"] or "off (or no worker has started yet)"
            self.stdout.write(f"{row['name']:<9} {row['cron']:<14} last: {last}  next: {upcoming}")
