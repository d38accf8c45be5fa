"""A runner's poll: with no job ready it only reads (on SQLite the engine's claim takes the write
lock, which every audited request then waits for); with one ready it claims and runs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connection

from jobs import queue
from jobs.engine import Worker
from secretsapi import operations
from tests import inline_jobs
from tests.factories import Project, definition, file_secret

DRIFT: dict[str, Any] = {"secret_name": None, "var_files": []}


def runner(queue_name: str) -> Worker:
    return Worker(queue_names=[queue_name], interval=0, batch=True, backend_name="default", startup_delay=False,
                  max_tasks=None, worker_id="tests:poll", excluded_queue_names=[])


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
