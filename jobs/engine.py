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

The runners of one process share that look (``Doorbell``): one plain SELECT per interval for all
of them, not one ORM query per runner. An idle worker's three runners spent 8% of a core on their
looks (1.4 ms of CPU each, 60 a second); one look of 0.1 ms every 50 ms costs 0.2%.
"""

from __future__ import annotations

import threading
import time
from traceback import format_exception
from typing import Any, cast

from django.db import close_old_connections, connection
from django.db.models import Field
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker as EngineWorker
from django_tasks_db.models import DBTaskResult, get_date_max
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


class Doorbell:
    """Which queues have a job ready, looked up at most once per ``interval`` for every runner
    sharing it. The query is the engine's ``DBTaskResult.objects.ready()`` for one backend, written
    out once (tests/jobs/test_engine_poll.py holds it to the engine's): the ORM built it again at
    each look, nine tenths of the look's cost."""

    def __init__(self, interval: float, backend_name: str = "default") -> None:
        self.interval = interval
        self.backend_name = backend_name
        self._lock = threading.Lock()
        self._looked_at = float("-inf")
        self._ready: frozenset[str] = frozenset()
        meta, quote = DBTaskResult._meta, connection.ops.quote_name

        def column(field: str) -> str:
            return quote(cast("Field[Any, Any]", meta.get_field(field)).column)

        self._sql = (f"SELECT DISTINCT {column('queue_name')} FROM {quote(meta.db_table)} "  # noqa: S608 - the model's own names
                     f"WHERE {column('status')} = %s AND {column('backend_name')} = %s "
                     f"AND ({column('run_after')} = %s OR {column('run_after')} <= %s)")

    def ready_queues(self) -> frozenset[str]:
        with self._lock:
            if time.monotonic() - self._looked_at >= self.interval:
                self._ready = self._look()
                self._looked_at = time.monotonic()
            return self._ready

    def _look(self) -> frozenset[str]:
        close_old_connections()  # as the engine's loop does when it wakes: a dropped connection is replaced
        adapt = connection.ops.adapt_datetimefield_value
        with connection.cursor() as cursor:
            cursor.execute(self._sql, [TaskResultStatus.READY.value, self.backend_name, adapt(get_date_max()),
                                       adapt(timezone.now())])
            return frozenset(queue for (queue,) in cursor.fetchall())


class Worker(EngineWorker):
    def __init__(self, *, doorbell: Doorbell | None = None, **engine: Any) -> None:
        super().__init__(**engine)
        self.doorbell = doorbell or Doorbell(self.interval, self.backend_name)

    def run_until_stopped(self) -> None:
        """Until ``running`` is False: the engine's loop, entered when a job is ready; made with
        ``batch=True``, it returns once no job is ready. It pauses after that too: the shared look
        may still name the queue it just emptied."""
        while self.running:
            if self._ready():
                self.run()
            if self.running:
                time.sleep(self.interval)

    def _ready(self) -> bool:
        ready = self.doorbell.ready_queues() - set(self.excluded_queue_names)
        return bool(ready if self.process_all_queues else ready & set(self.queue_names))

    def run_task(self, db_task_result: DBTaskResult[..., Any]) -> None:
        db_task_result.set_failed = lambda exc: _set_failed(db_task_result, exc)
        super().run_task(db_task_result)
