"""``manage.py health``: for container and supervisor health checks (Docker's HEALTHCHECK, compose).

Plain: exit 0 when the database answers a ``SELECT 1`` (what the API needs to answer). With
``--worker``: exit 0 only when a job worker's heartbeat is fresh (under three beats of
SERVICE_WORKER_HEARTBEAT_SECONDS: 30 s by default, never a minute); ``--this-host`` counts only
the workers of this host (a worker container checking itself). Prints one line (or ``--json``)
saying up or down, never more.
"""

from __future__ import annotations

import json
import socket
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import CommandError
from django.db import DatabaseError, connection

from jobs import workers
from jobs.models import WorkerBeat
from secretsapi.management.checks import PagelessCommand


class Command(PagelessCommand):
    help = ("Exit 0 when the database answers; with --worker, only when a job worker's heartbeat is fresh "
            "(for container health checks).")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--worker", action="store_true", help="Also require a live job worker.")
        parser.add_argument("--this-host", action="store_true", help="With --worker: a worker of this host.")
        parser.add_argument("--json", action="store_true", help="Machine-readable output.")

    def handle(self, *args: Any, **options: Any) -> None:
        found: dict[str, Any] = {"database": "down"}
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            found["database"] = "up"
            if options["worker"]:
                beats = WorkerBeat.objects.filter(seen_at__gte=workers.alive_since())
                if options["this_host"]:
                    beats = beats.filter(host=socket.gethostname())
                found["workers"] = "up" if beats.exists() else "down"
                seen = workers.last_seen()
                found["last_heartbeat"] = seen.isoformat() if seen is not None else None
        except DatabaseError:
            if options["worker"]:
                found.update(workers="down", last_heartbeat=None)
        text = json.dumps(found) if options["json"] else " ".join(f"{k}: {v}" for k, v in found.items() if v)
        healthy = found["database"] == "up" and found.get("workers", "up") == "up"
        if not healthy:
            raise CommandError(text, returncode=1)
        self.stdout.write(text)
