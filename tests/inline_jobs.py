"""Jobs run in the test's process as they are queued: the task engine's own worker loop (batch
mode, the same claim a worker makes) takes each job at once, so the API's tests see what a worker
would do; tests/processes/ start real workers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django_tasks.signals import task_enqueued

from jobs import workers
from jobs.engine import Worker

IN_PROCESS = "tests:in-process"
_real_alive = workers.alive


def _run_now(sender: Any, task_result: Any, **kwargs: Any) -> None:
    run_queued(task_result.task.queue_name)


def _always_alive(queue: str | None = None) -> bool:
    return True


def run_in_process() -> None:
    task_enqueued.connect(_run_now, dispatch_uid="tests.inline_jobs")
    workers.alive = _always_alive  # the test's process is the worker


def stop_running() -> None:
    task_enqueued.disconnect(dispatch_uid="tests.inline_jobs")


@contextmanager
def queued_only() -> Iterator[None]:
    """Jobs are only queued: a worker is alive, but none takes them."""
    stop_running()
    try:
        yield
    finally:
        run_in_process()


@contextmanager
def no_worker() -> Iterator[None]:
    """No worker at all: no heartbeat, nothing runs."""
    stop_running()
    workers.alive = _real_alive
    try:
        yield
    finally:
        run_in_process()


def run_queued(queue_name: str) -> None:
    """Run every job waiting in ``queue_name`` now, as a worker would."""
    Worker(queue_names=[queue_name], interval=0, batch=True, backend_name="default", startup_delay=False,
           max_tasks=None, worker_id=IN_PROCESS, excluded_queue_names=[]).run()
