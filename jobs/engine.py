"""The task engine's worker loop, with a failed job's outcome written as the job ends.

``django_tasks_db`` ends a failed job in one UPDATE (``FAILED``, ``return_value`` None) and only
then sends ``task_finished``, whose handler (``jobs.outcomes.finished``) stores the failure. A
request waiting for the job (``secretsapi.operations.wait``) could read the row in between: a
job ``failed`` with no failure, answered 500 ``internal_error`` instead of, say, 404
``secret_not_defined``. Here the row's ``set_failed`` writes the outcome the task kept
(``jobs.outcomes.failing``) in that same UPDATE, so no reader ever sees the one without the other.
"""

from __future__ import annotations

from traceback import format_exception
from typing import Any

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
    def run_task(self, db_task_result: DBTaskResult[..., Any]) -> None:
        db_task_result.set_failed = lambda exc: _set_failed(db_task_result, exc)
        super().run_task(db_task_result)
