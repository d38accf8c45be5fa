"""Job workers' heartbeats: who is alive, what each is running, and how far it got.

A worker writes its row every SERVICE_WORKER_HEARTBEAT_SECONDS (secretsapi/management/commands/worker.py).
It is *alive* while its row is younger than three heartbeats (what ``GET /health``, ``manage.py
health --worker`` and a long operation's 503 ``no_worker`` read), and *dead* once older than six
(jobs.recovery then takes its job back). One clock: the database's rows are written with this
host's time, so hosts sharing a database keep their clocks in sync (NTP), as any cluster does.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from jobs.models import WorkerBeat

# A job's progress is written at most this often (a sync reports every secret).
PROGRESS_INTERVAL = 0.5


def interval() -> float:
    return float(settings.SERVICE_WORKER_HEARTBEAT_SECONDS)


def alive_since(now: datetime | None = None) -> datetime:
    """Rows seen after this belong to live workers."""
    return (now or timezone.now()) - timedelta(seconds=3 * interval())


def dead_before(now: datetime | None = None) -> datetime:
    """Rows last seen before this belong to workers that died."""
    return (now or timezone.now()) - timedelta(seconds=6 * interval())


def worker_id(queue: str, index: int) -> str:
    """The task engine's worker id (at most 64 characters): host, process, queue and runner."""
    suffix = f":{os.getpid()}:{queue}{index}"
    return socket.gethostname()[: 64 - len(suffix)] + suffix


def register(ids: Iterable[tuple[str, str]]) -> None:
    """Rows for this process's runners, ``(worker id, queue)`` each, before they take a job."""
    now = timezone.now()
    for wid, queue in ids:
        WorkerBeat.objects.update_or_create(id=wid, defaults={
            "host": socket.gethostname(), "pid": os.getpid(), "queue": queue, "started_at": now, "seen_at": now,
            "job": None, "done": 0, "total": None, "audit_row": None})


def beat(ids: Iterable[str]) -> None:
    WorkerBeat.objects.filter(id__in=list(ids)).update(seen_at=timezone.now())


def unregister(ids: Iterable[str]) -> None:
    WorkerBeat.objects.filter(id__in=list(ids)).delete()


def alive(queue: str | None = None) -> bool:
    rows = WorkerBeat.objects.filter(seen_at__gte=alive_since())
    return (rows.filter(queue=queue) if queue else rows).exists()


def last_seen() -> datetime | None:
    row = WorkerBeat.objects.order_by("-seen_at").values_list("seen_at", flat=True).first()
    return row


class Reporter:
    """A running job's ``progress(done, total)`` and the audit row its write began, written to its
    worker's row (the progress at most every PROGRESS_INTERVAL)."""

    def __init__(self, wid: str, job_id: Any) -> None:
        self.wid = wid
        self.done = 0
        self.total: int | None = None
        self._last = 0.0
        WorkerBeat.objects.filter(id=wid).update(job=job_id, done=0, total=None, audit_row=None,
                                                 seen_at=timezone.now())

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        now = time.monotonic()
        if done < total and now - self._last < PROGRESS_INTERVAL:
            return
        self._last = now
        WorkerBeat.objects.filter(id=self.wid).update(done=done, total=total)

    def audit_row(self, row_id: int) -> None:
        WorkerBeat.objects.filter(id=self.wid).update(audit_row=row_id)

    def figures(self) -> dict[str, int | None]:
        return {"done": self.done, "total": self.total}

    def release(self) -> None:
        """The job has ended: the row no longer names it."""
        WorkerBeat.objects.filter(id=self.wid).update(job=None, audit_row=None)
