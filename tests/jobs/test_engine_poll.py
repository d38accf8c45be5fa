"""A runner's poll: with no job ready it only reads (on SQLite the engine's claim takes the write
lock, which every audited request then waits for); with one ready it claims and runs it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import connection
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult, get_date_max

from jobs import queue
from jobs.engine import Doorbell, Worker
from secretsapi import operations
from tests import inline_jobs
from tests.factories import Project, definition, file_secret

DRIFT: dict[str, Any] = {"secret_name": None, "var_files": []}


def runner(queue_name: str, doorbell: Doorbell | None = None) -> Worker:
    return Worker(queue_names=[queue_name], interval=0, batch=True, backend_name="default", startup_delay=False,
                  max_tasks=None, worker_id="tests:poll", excluded_queue_names=[], doorbell=doorbell)


def row(queue_name: str, **fields: Any) -> None:
    DBTaskResult.objects.create(**{"args_kwargs": {}, "task_path": "tests.none", "backend_name": "default",
                                   "run_after": timezone.now() - timedelta(seconds=1), "queue_name": queue_name,
                                   **fields})


def polls(engine: Worker, times: int, statements: list[str]) -> Callable[..., Any]:
    """An execute wrapper recording each statement, stopping ``engine`` after ``times`` reads of the queue."""
    def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append(sql)
        if "django_tasks_database_dbtaskresult" in sql and sum("dbtaskresult" in s for s in statements) >= times:
            engine.running = False
        return execute(sql, params, many, context)
    return wrapper


def test_an_idle_runner_reads_the_queue_without_a_transaction(db: None) -> None:
    engine, statements = runner(operations.queue_name("reads")), list[str]()
    with connection.execute_wrapper(polls(engine, 5, statements)):
        engine.run_until_stopped()
    assert sum("dbtaskresult" in s for s in statements) == 5
    assert not [s for s in statements if s.split()[0].upper() in ("BEGIN", "SAVEPOINT", "UPDATE")]


def test_a_runner_claims_and_runs_a_job_that_is_ready(db: None, project: Project) -> None:
    project.write(definition(file_secret("a")))
    with inline_jobs.queued_only():
        job = operations.enqueue("check_drift", DRIFT, actor="ci")
    engine, statements = runner(operations.queue_name("reads")), list[str]()
    with connection.execute_wrapper(polls(engine, 12, statements)):
        engine.run_until_stopped()
    found = queue.find(job.id)
    assert found is not None and found.state == "succeeded"


def test_a_runner_leaves_the_jobs_of_other_queues(db: None, project: Project) -> None:
    project.write(definition(file_secret("a")))
    with inline_jobs.queued_only():
        job = operations.enqueue("sync", {"dry_run": False, "force": False, "secret_name": None, "var_files": [],
                                          "repair": False}, actor="ci")
    engine, statements = runner(operations.queue_name("reads")), list[str]()
    with connection.execute_wrapper(polls(engine, 3, statements)):
        engine.run_until_stopped()
    found = queue.find(job.id)
    assert found is not None and found.state == "queued"


def test_the_runners_of_a_process_share_one_look_at_the_queue_per_interval(db: None) -> None:
    doorbell, statements = Doorbell(interval=3600), list[str]()
    reads, writes = runner(operations.queue_name("reads"), doorbell), runner(operations.queue_name("writes"), doorbell)
    def recording(execute: Callable[..., Any], sql: str, *rest: Any) -> Any:
        statements.append(sql)
        return execute(sql, *rest)

    with connection.execute_wrapper(recording):
        looks = [reads._ready(), writes._ready(), reads._ready()]
    assert looks == [False, False, False]
    assert sum("dbtaskresult" in s for s in statements) == 1


def test_the_shared_look_finds_each_queue_with_a_job_ready(db: None) -> None:
    doorbell = Doorbell(interval=3600)
    row(operations.queue_name("reads"))
    assert runner(operations.queue_name("reads"), doorbell)._ready()
    assert not runner(operations.queue_name("writes"), doorbell)._ready()


def test_the_shared_look_names_the_queues_the_engine_would_claim_from(db: None) -> None:
    row("now")
    row("unscheduled", run_after=get_date_max())
    row("later", run_after=timezone.now() + timedelta(hours=1))
    row("running", status=TaskResultStatus.RUNNING)
    row("done", status=TaskResultStatus.SUCCESSFUL)
    row("elsewhere", backend_name="other")
    engine = set(DBTaskResult.objects.ready().filter(backend_name="default").values_list("queue_name", flat=True))
    assert Doorbell(interval=0).ready_queues() == engine == {"now", "unscheduled"}
