"""``manage.py worker``: the job worker and the scheduler (django-q2's cluster) until stopped."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from multiprocessing.util import register_after_fork
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connections

from deployment.key_fingerprint import SecretKeyMismatch, verify_secret_key
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
            # Every instance and worker on this database signs with one key (deployment/key_fingerprint.py).
            verify_secret_key()
            schedules.install()
            ended = runner.recover()
        except SecretKeyMismatch as exc:
            raise CommandError(str(exc)) from None
        except (LockTimeout, DatabaseError) as exc:
            raise CommandError(as_failure(exc).detail) from None
        for job in ended:
            self.stderr.write(f"job {job.pk} ({job.operation}): its worker had stopped; ended or queued again")
        # The cluster forks its processes: none may inherit this one's connections.
        connections.close_all()
        register_after_fork(self, _cluster_process)
        call_command("qcluster")


# prctl(2)'s option: the signal a process gets when its parent dies (Linux).
PR_SET_PDEATHSIG = 1


def _cluster_process(command: Command) -> None:
    """In each process the cluster forks, before it runs.

    django-q2's processes die at once on SIGTERM, and one that dies holding the cluster's stop
    event leaves it unable to stop. Supervisors (honcho, systemd by default) signal the whole
    process group: the cluster's processes get a group of their own, so only this command's
    process is signalled, and it stops them in order (a running job finishes first). They
    still never outlive it: on Linux each is killed when its parent dies (a killed job is
    then ended by jobs.runner.recover).
    """
    os.setpgid(0, 0)
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
