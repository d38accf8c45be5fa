"""``manage.py worker``: the job runners, the schedules, recovery and webhook deliveries, until stopped.

The runners are the task engine's own (``django_tasks_db``'s worker loop, one per thread:
SERVICE_JOB_WRITE_WORKERS (2) for the ``writes`` queue, the rest of SERVICE_JOB_WORKERS for
``reads``). Beside them one thread writes the heartbeat, takes back the jobs of dead workers,
queues the schedules' due ticks and prunes old jobs, every SERVICE_WORKER_HEARTBEAT_SECONDS;
another sends the webhook deliveries that are due, every second. SIGTERM or SIGINT: each runner
finishes its job, then the command exits.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from argparse import ArgumentParser
from collections.abc import Callable
from datetime import timedelta
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from audit import origin
from audit.recorder import complete_unwritten, has_unwritten
from deployment.key_fingerprint import SecretKeyMismatch, verify_secret_key
from jobs import queue, recovery, schedules, workers
from jobs.engine import Doorbell, Worker
from secretsapi import database_errors, operations
from secretsapi.management.base import as_failure, migrate_pending, say
from secretsapi.management.checks import PagelessCommand
from secretsapi.service.errors import LockTimeout
from webhooks.delivery import deliver_due

logger = logging.getLogger("secretsapi.worker")

# How often the worker looks for a ready job (one look for all its runners): the most a job waits
# to start. Each runner reads that look five times as often, so it starts a job within 10 ms of it.
POLL_SECONDS = 0.05
RUNNER_WAKE_SECONDS = POLL_SECONDS / 5
PRUNE_EVERY = timedelta(hours=1)


class Command(PagelessCommand):
    help = ("Run the long operations' jobs and the schedules (SERVICE_ROTATION_SCHEDULE, SERVICE_DRIFT_SCHEDULE) "
            "until stopped (SIGINT or SIGTERM: running jobs finish first). Run one or more beside `serve`.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--stop-with-parent", action="store_true",
                            help="Stop (as on SIGTERM) when the process that started this one ends (serve's own).")

    def handle(self, *args: Any, **options: Any) -> None:
        # First, while this is the only thread: on Linux a thread's niceness is its own, and the
        # threads started below inherit it.
        lower_priority(settings.SERVICE_WORKER_NICE)
        # What this process records beside its jobs (each job names its request's client, or its runner).
        origin.set_process_origin(origin.worker(f"{socket.gethostname()}:{os.getpid()}"))
        runners = runner_queues()
        # Registered as early as the table exists (a serve that started this worker waits for it);
        # a job queued meanwhile waits for the runners, never refused.
        registered = _register(runners)
        try:
            # The worker may start before `serve` has migrated (`make serve` starts both).
            migrate_pending()
            # Every instance and worker on this database signs with one key (deployment/key_fingerprint.py).
            verify_secret_key()
            schedules.install()
            for job in recovery.recover():
                say(logger, logging.WARNING, f"job {job.job}: its worker had stopped; "
                    f"{'queued again' if job.requeued else 'ended failed'}", self.stderr)
            if not registered:
                workers.register(runners)
        except SecretKeyMismatch as exc:
            raise CommandError(str(exc)) from None
        except (LockTimeout, DatabaseError) as exc:
            raise CommandError(as_failure(exc).detail) from None
        parent = os.getppid()
        stop = threading.Event()
        doorbell = Doorbell(POLL_SECONDS)
        engines = [Worker(queue_names=[name], interval=RUNNER_WAKE_SECONDS, batch=True, backend_name="default",
                          startup_delay=False, max_tasks=None, worker_id=wid, excluded_queue_names=[],
                          doorbell=doorbell)
                   for wid, name in runners]

        def stopping(signum: int, frame: FrameType | None) -> None:
            stop.set()
            for engine in engines:
                engine.running = False  # each ends after its current job

        signal.signal(signal.SIGTERM, stopping)
        signal.signal(signal.SIGINT, stopping)
        service = [threading.Thread(target=_closing(lambda: _housekeeping(stop, [w for w, _ in runners])),
                                    name="housekeeping"),
                   threading.Thread(target=_closing(lambda: _deliveries(stop)), name="webhooks", daemon=True)]
        for thread in service:
            thread.start()
        operations.warm_up()
        threads = [threading.Thread(target=_closing(_runner(engine, stop)), name=engine.worker_id)
                   for engine in engines]
        for thread in threads:
            thread.start()
        say(logger, logging.INFO, f"Job worker ready: {len(runners)} runners ({', '.join(w for w, _ in runners)})",
            self.stdout)
        self.stdout.flush()
        for thread in [*threads, service[0]]:
            while thread.is_alive():
                thread.join(timeout=1)
                if options["stop_with_parent"] and os.getppid() != parent:
                    stopping(signal.SIGTERM, None)
        workers.unregister([w for w, _ in runners])


def lower_priority(niceness: int) -> None:
    """Run at ``niceness`` or lower priority: a sync's CPU-bound work then gives way to the web
    workers' requests on a shared host (a status read beside a 20,000-secret sync: p99 from about
    27 to 20 ms, bench/README.md). A worker started already nicer keeps its niceness (lowering it
    would need privileges)."""
    if niceness > os.getpriority(os.PRIO_PROCESS, 0):
        os.setpriority(os.PRIO_PROCESS, 0, niceness)


def runner_queues() -> list[tuple[str, str]]:
    """(worker id, queue) of each runner: SERVICE_JOB_WRITE_WORKERS for writes, the rest reads."""
    writes = settings.SERVICE_JOB_WRITE_WORKERS
    runners = [(workers.worker_id("writes", n), operations.queue_name(operations.WRITES)) for n in range(writes)]
    runners += [(workers.worker_id("reads", n), operations.queue_name(operations.READS))
                for n in range(writes, settings.SERVICE_JOB_WORKERS)]
    return runners


def _register(runners: list[tuple[str, str]]) -> bool:
    try:
        workers.register(runners)
    except DatabaseError:
        return False  # a database not migrated yet: after the migrations
    return True


def _closing(run: Callable[[], None]) -> Callable[[], None]:
    """``run`` in a thread of its own, closing that thread's database connection at its end."""
    def body() -> None:
        try:
            run()
        finally:
            connection.close()
    return body


def _runner(engine: Worker, stop: threading.Event) -> Callable[[], None]:
    """The engine's loop, started again (a second later) if it fails: the database locked past its
    timeout or gone for a while must not leave this worker alive without a runner."""
    def run() -> None:
        while not stop.is_set():
            try:
                engine.run_until_stopped()
            except Exception as exc:
                if database_errors.unreachable(exc):
                    # The database away for a while: one line, not a traceback every second.
                    logger.warning("job runner %s: database unavailable (%s); starting it again", engine.worker_id,
                                   _first_line(exc))
                else:
                    logger.exception("job runner %s failed; starting it again", engine.worker_id)
                take_back_held(engine.worker_id, stop)
                continue
            return
    return run


def take_back_held(wid: str, stop: threading.Event, pause: float = 1.0) -> None:
    """The job runner ``wid`` held when it failed, taken back as a dead worker's would be, before
    it takes another: tried every ``pause`` seconds while the database is away. Tried once only,
    the job would stay running for good (housekeeping keeps this worker's heartbeat fresh, so no
    recovery would ever see it dead) and its kept outcome unwritten."""
    while not stop.wait(pause):
        try:
            close_old_connections()
            recovery.recover(gone=wid)
            return
        except Exception as exc:
            if not database_errors.unreachable(exc):
                logger.exception("job runner %s: taking back the job it held failed", wid)
                return


def _first_line(exc: BaseException) -> str:
    """An error's first line (a database error's message runs over several)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _housekeeping(stop: threading.Event, ids: list[str]) -> None:
    """Every heartbeat: the heartbeat, recovery, the schedules' due ticks; every hour, the prune."""
    pruned_at = None
    while not stop.is_set():
        try:
            close_old_connections()
            workers.beat(ids)
            if has_unwritten():  # outcomes kept while the database was away, not left for the next job's row
                complete_unwritten()
            for job in recovery.recover():
                logger.warning("job %s: its worker had stopped; %s", job.job,
                               "queued again" if job.requeued else "ended failed")
            schedules.due(operations.enqueue)
            now = timezone.now()
            if pruned_at is None or now - pruned_at > PRUNE_EVERY:
                queue.prune_ended()
                pruned_at = now
        except DatabaseError as exc:
            # The database away for a while: the next beat tries again.
            logger.warning("worker housekeeping: %s", exc)
        except Exception:
            logger.exception("worker housekeeping failed; trying again at the next beat")
        stop.wait(workers.interval())


def _deliveries(stop: threading.Event) -> None:
    """The webhook deliveries that are due, every second (new events and retries)."""
    while True:
        try:
            close_old_connections()
            deliver_due()
        except Exception as exc:
            if database_errors.unreachable(exc):
                logger.warning("webhook deliveries: database unavailable (%s); trying again in a second",
                               _first_line(exc))
            else:
                logger.exception("webhook deliveries failed; trying again in a second")
        if stop.wait(1.0):
            return
