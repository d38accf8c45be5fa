"""``manage.py worker``: the job worker and the scheduler (django-q2's cluster) until stopped."""

from __future__ import annotations

import os
from multiprocessing.util import register_after_fork
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connections

from jobs import runner, schedules
from secretsapi.management.base import as_failure, migrate_pending
from secretsapi.service.errors import LockTimeout


class Command(BaseCommand):
    help = ("Run the long operations' jobs and the schedules (SERVICE_ROTATION_SCHEDULE, SERVICE_DRIFT_SCHEDULE) "
            "until stopped (SIGINT or SIGTERM: running jobs finish first). Run one or more beside `serve`.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            # The worker may start before `serve` has migrated (`make serve` starts both).
            migrate_pending()
            schedules.install()
            ended = runner.recover()
        except (LockTimeout, DatabaseError) as exc:
            raise CommandError(as_failure(exc).detail) from None
        for job in ended:
            self.stderr.write(f"job {job.pk} ({job.operation}): its worker had stopped; ended or queued again")
        # The cluster forks its processes: none may inherit this one's connections.
        connections.close_all()
        # django-q2's processes die at once on SIGTERM, and one that dies holding the cluster's
        # stop event leaves it unable to stop. Supervisors (honcho, `make serve`) signal the whole
        # process group: the cluster's processes get a group of their own, so only this process
        # is signalled, and it stops them in order (a running job finishes first).
        register_after_fork(self, _own_process_group)
        call_command("qcluster")


def _own_process_group(command: Command) -> None:
    os.setpgid(0, 0)
