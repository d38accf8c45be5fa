"""A real `manage.py worker`: it runs a queued job, every thread at SERVICE_WORKER_NICE; it
rotates a secret that fell due at the tick due, with no caller; a job whose worker is killed
(SIGKILL) mid-write ends `failed` with its audit row completed (the rerun of a job that wrote
nothing: tests/jobs/test_recovery.py); killed, the worker shows as down in `/health` within a
minute and long operations answer 503 at once; stopped with SIGTERM, it finishes its job first."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.state.locks import acquire_file_lock
from tests.factories import file_secret
from tests.processes.live import ROOT, LiveServer, migrated_sqlite, server_env, sqlite_rows, write_definition

pytestmark = pytest.mark.slow

SUBMIT = """
from secretsapi import operations
job = operations.enqueue(%r, %r, actor="ci")
print(job.id)
"""
SYNC: dict[str, Any] = {"dry_run": False, "force": False, "secret_name": None, "var_files": [], "repair": False}
# One beat a second: a killed worker is dead to recovery after six.
BEAT = "1"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    config = write_definition(tmp_path, {"version": "1.0", "secrets": [file_secret("a")]})
    return server_env(data_dir=tmp_path / "data", config=config,
                      extra={"SERVICE_LOCK_TIMEOUT": "300", "SERVICE_WORKER_HEARTBEAT_SECONDS": BEAT})


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=True)


def submit(env: dict[str, str], operation: str = "sync", payload: dict[str, Any] | None = None) -> str:
    return manage(env, "shell", "-c", SUBMIT % (operation, payload or SYNC)).stdout.split()[-1]


@pytest.fixture
def workers(env: dict[str, str]) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(given: dict[str, str] | None = None, prefix: tuple[str, ...] = ()) -> subprocess.Popen[str]:
        process = subprocess.Popen([*prefix, sys.executable, "manage.py", "worker"], cwd=ROOT, env=given or env,
                                   text=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def database(env: dict[str, str]) -> Path:
    return Path(env["SERVICE_DATA_DIR"]) / "service.sqlite3"


def job_row(env: dict[str, str], job_id: str) -> dict[str, Any]:
    rows = sqlite_rows(database(env), "SELECT status, worker_ids, return_value FROM django_tasks_database_dbtaskresult "
                                      "WHERE id = ?", (job_id.replace("-", ""),))
    status, worker_ids, outcome = rows[0]
    outcome = json.loads(outcome) if outcome else None
    failure = json.loads(outcome["failure"]) if outcome and outcome.get("failure") else None
    result = json.loads(outcome["result"]) if outcome and outcome.get("result") else None
    return {"status": status, "workers": json.loads(worker_ids), "failure": failure, "result": result}


def beat_of(env: dict[str, str], job_id: str) -> tuple[Any, ...] | None:
    rows = sqlite_rows(database(env), "SELECT id, audit_row FROM jobs_workerbeat WHERE job = ?",
                       (job_id.replace("-", ""),))
    return rows[0] if rows else None


def until(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_worker_runs_a_queued_job(env: dict[str, str], workers: Callable[..., subprocess.Popen[str]]) -> None:
    migrated_sqlite(database(env))
    job_id = submit(env)
    workers()
    until(lambda: job_row(env, job_id)["status"] == "SUCCESSFUL", "the worker never ran the job")
    assert job_row(env, job_id)["result"]["secrets_generated"] == ["a"]


def niceness_of_threads(pid: int) -> list[int]:
    """Each thread's nice value (``/proc/<pid>/task/<tid>/stat``, field 19): on Linux each thread
    has its own."""
    values = []
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        with contextlib.suppress(FileNotFoundError):
            values.append(int(stat.read_text().rsplit(")", 1)[1].split()[16]))
    return values


def ran_a_job(env: dict[str, str], job_id: str) -> bool:
    return bool(job_row(env, job_id)["status"] == "SUCCESSFUL")


@pytest.mark.parametrize(("setting", "started_at", "expected"), [
    ("7", 0, 7),     # raised to the setting
    ("3", 12, 12),   # started nicer: kept (never lowered)
    ("0", 0, 0),     # 0: the priority it was started at
])
def test_every_thread_of_a_worker_runs_at_the_niceness_set_or_nicer(
    env: dict[str, str], workers: Callable[..., subprocess.Popen[str]], setting: str, started_at: int, expected: int
) -> None:
    own = os.getpriority(os.PRIO_PROCESS, 0)
    migrated_sqlite(database(env))
    job_id = submit(env)
    worker = workers({**env, "SERVICE_WORKER_NICE": setting}, prefix=("nice", "-n", str(started_at)))
    until(lambda: ran_a_job(env, job_id), "the worker never ran the job")
    threads = niceness_of_threads(worker.pid)
    # The main thread, housekeeping, webhook deliveries and every runner, the one that ran the job included.
    assert len(threads) >= 3 + 3
    assert set(threads) == {max(min(own + started_at, 19), expected)}


def test_a_due_secret_is_rotated_at_the_tick_due_with_no_caller(
    env: dict[str, str], workers: Callable[..., subprocess.Popen[str]], tmp_path: Path
) -> None:
    config = write_definition(tmp_path, {"version": "1.0", "secrets": [file_secret("a", rotation_period="30d")]})
    env = {**env, "SERVICE_CONFIG": str(config), "SERVICE_ROTATION_SCHEDULE": "* * * * *"}
    manage(env, "sync")
    # The schedule as a worker installed it, its last tick long ago: this minute's tick is due at the
    # worker's first look, not at the next minute (up to 60 s of waiting; which tick is due when is
    # tests/jobs/test_schedules.py's).
    with contextlib.closing(sqlite3.connect(database(env))) as conn, conn:
        conn.execute("INSERT INTO jobs_schedule (name, cron, setting, last_tick, installed_at) VALUES "
                     "('rotation', '* * * * *', 'SERVICE_ROTATION_SCHEDULE', '2020-01-01 00:00:00', "
                     "'2020-01-01 00:00:00')")
    lockfile = tmp_path / ".gitsecrets.lock"
    lock = json.loads(lockfile.read_text())
    created = lock["secrets"]["a"]["hash"]
    lock["secrets"]["a"]["created_at"] = lock["secrets"]["a"]["updated_at"] = "2020-01-01T00:00:00+00:00"
    lockfile.write_text(json.dumps(lock))
    workers(env)
    until(lambda: json.loads(lockfile.read_text())["secrets"]["a"]["hash"] != created,
          "the due secret was not rotated", seconds=90)
    query = "SELECT user, success, details FROM audit_auditentry WHERE action = 'execute_rotation'"
    until(lambda: all(json.loads(details).get("state") != "started"
                      for *_, details in sqlite_rows(database(env), query)), "the rotation's row was never completed")
    rows = sqlite_rows(database(env), query)
    assert [(user, success) for user, success, _ in rows] == [("scheduler", 1)], rows
    # Where it came from: the worker's runner that ran it (host, process, queue), not a command line.
    (origin,) = sqlite_rows(database(env), "SELECT origin FROM audit_auditentry WHERE action = 'execute_rotation'")[0]
    assert re.fullmatch(rf"worker:{re.escape(socket.gethostname())}:\d+:writes\d+", origin), origin


def test_a_job_whose_worker_is_killed_mid_write_ends_failed_with_its_audit_row_completed(
    env: dict[str, str], workers: Callable[..., subprocess.Popen[str]], tmp_path: Path
) -> None:
    migrated_sqlite(database(env))
    # The write waits for the lockfile's lock, after its audit row began.
    held = acquire_file_lock(tmp_path / ".gitsecrets.lock.lck", 5, "the test's lock")
    try:
        job_id = submit(env)
        first = workers()
        until(lambda: (beat_of(env, job_id) or (None, None))[1] is not None, "the job never began its write")
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        assert job_row(env, job_id)["status"] == "RUNNING"
        workers()
        until(lambda: job_row(env, job_id)["status"] != "RUNNING", "the dead worker's job stayed running")
    finally:
        held.release()
    row = job_row(env, job_id)
    assert (row["status"], row["failure"]["code"]) == ("FAILED", "worker_died")
    audit = sqlite_rows(database(env), "SELECT success, details FROM audit_auditentry WHERE action = 'sync'")
    assert len(audit) == 1
    details = json.loads(audit[0][1])
    assert (audit[0][0], details.get("error")) == (0, "worker_died"), details
    assert not (tmp_path / "out/app.env").exists()


def test_a_killed_worker_shows_as_down_in_health_within_a_minute(
    env: dict[str, str], servers: Callable[..., LiveServer], tmp_path: Path
) -> None:
    # Down after three beats missed: 30 s at the default beat (10 s; tests/api/test_root_and_health.py),
    # 6 s at this one.
    server = servers({**env, "SERVICE_WORKER_HEARTBEAT_SECONDS": "2"}, tmp_path / "server.log",
                     separate_worker=True)
    assert server.call("GET", "/health")[1]["workers"] == "up"
    assert server.jobs is not None
    os.killpg(server.jobs.pid, signal.SIGKILL)
    killed = time.monotonic()
    until(lambda: server.call("GET", "/health")[1]["status"] == "degraded", "health never said degraded", 60)
    assert time.monotonic() - killed < 60
    status, body = server.call("POST", "/sync", {})
    assert status == 503 and "no_worker" in body["detail"]


def test_sigterm_lets_the_running_job_finish_first(
    env: dict[str, str], workers: Callable[..., subprocess.Popen[str]], tmp_path: Path
) -> None:
    migrated_sqlite(database(env))
    held = acquire_file_lock(tmp_path / ".gitsecrets.lock.lck", 5, "the test's lock")
    try:
        job_id = submit(env)
        worker = workers()
        until(lambda: job_row(env, job_id)["status"] == "RUNNING", "the job never started")
        worker.send_signal(signal.SIGTERM)
        time.sleep(1)
        assert worker.poll() is None  # waiting for its job
    finally:
        held.release()
    worker.wait(timeout=60)
    assert job_row(env, job_id)["status"] == "SUCCESSFUL"
