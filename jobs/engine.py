"""The task engine's worker loop, with a failed job's outcome written as the job ends.

``django_tasks_db`` ends a failed job in one UPDATE (``FAILED``, ``return_value`` None) and only
then sends ``task_finished``, whose handler (``jobs.outcomes.finished``) stores the failure. A
request waiting for the job (``secretsapi.operations.wait``) could read the row in between: a
job ``failed`` with no failure, answered 500 ``internal_error`` instead of, say, 404
``secret_not_defined``. Here the row's ``set_failed`` writes the outcome the task kept
(``jobs.outcomes.failing``) in that same UPDATE, so no reader ever sees the one without the other.

An idle runner looks for a ready job without a transaction before it enters the engine's loop,
which claims in an exclusive one. The engine's loop takes SQLite's write lock at every poll,
ready job or not, and a runner thread sharing its process with a CPU-bound job (a 20,000-secret
sync) waits for the GIL at each step of that poll while holding the lock: 60-330 ms at a time,
during which every other writer (each audited request of every project) waited
(bench/README.md, "The job runners' poll"). A read in WAL mode takes no lock.
"""

from __future__ import annotations

import time
from traceback import format_exception
from typing import Any

from django.db import close_old_connections
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker as EngineWorker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import retry

from jobs import outcomes


@retry()
def _set_failed(row: DBTaskResult[..., Any], exc: BaseException) -> None:
    """The engine's ``DBTaskResult.set_failed``, with the kept outcome as ``return_value``."""
    row.status = TaskResultStatus.FAILED
    row.finished_at = timezone.now()
    row.exception_class_path = f"{type(exc).__module__}.{type(exc).__qualname__}"
    row.traceback = "".join(format_exception(exc))
    row.return_value = outcomes.kept(row.id)
    row.save(update_fields=["status", "return_value", "finished_at", "exception_class_path", "traceback"])


class Worker(EngineWorker):
    def run_until_stopped(self) -> None:
        """Until ``running`` is False: the engine's loop, entered when a job is ready; made with
        ``batch=True``, it returns once no job is ready."""
        while self.running:
            if self._ready():
                self.run()
            elif self.running:
                time.sleep(self.interval)

    def _ready(self) -> bool:
        close_old_connections()  # as the engine's loop does when it wakes: a dropped connection is replaced
        tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name, queue_name__in=self.queue_names)
        return tasks.exclude(queue_name__in=self.excluded_queue_names).exists()

    def run_task(self, db_task_result: DBTaskResult[..., Any]) -> None:
        db_task_result.set_failed = lambda exc: _set_failed(db_task_result, exc)
        super().run_task(db_task_result)
