"""A real `manage.py worker`: it runs a queued job; it rotates a secret that fell due at the next
tick with no caller; a job whose process is killed mid-write ends `failed` with its audit row
completed once a worker starts again; and killing the worker command leaves none of its
processes behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.state.locks import acquire_file_lock
from tests.factories import file_secret
from tests.processes.live import ROOT, server_env, sqlite_rows, write_definition

pytestmark = pytest.mark.slow

SUBMIT = """
from jobs import runner
job = runner.submit("sync", {"dry_run": False, "force": False, "secret_name": None, "var_files": [],
                             "repair": False}, actor="ci")
print(job.pk.hex)
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    config = write_definition(tmp_path, {"version": "1.0", "secrets": [file_secret("a")]})
    return server_env(data_dir=tmp_path / "data", config=config, extra={"SERVICE_LOCK_TIMEOUT": "300"})


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=True)


@pytest.fixture
def workers(env: dict[str, str]) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(given: dict[str, str] | None = None) -> subprocess.Popen[str]:
        process = subprocess.Popen([sys.executable, "manage.py", "worker"], cwd=ROOT, env=given or env, text=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
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


def job_row(env: dict[str, str], job_id: str) -> dict[str, Any]:
    database = Path(env["SERVICE_DATA_DIR"]) / "service.sqlite3"
    rows = sqlite_rows(database, "SELECT state, worker, audit_row, status_code, result FROM jobs_job WHERE id = ?",
                       (job_id,))
    state, worker, audit_row, status, result = rows[0]
    return {"state": state, "worker": worker, "audit_row": audit_row, "status": status,
            "result": json.loads(result) if result else None}


def until(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_worker_runs_a_queued_job(env: dict[str, str], workers: Callable[..., subprocess.Popen[str]]) -> None:
    manage(env, "migrate", "-v", "0")
    job_id = manage(env, "shell", "-c", SUBMIT).stdout.split()[-1]
    workers()
    until(lambda: job_row(env, job_id)["state"] == "succeeded", "the worker never ran the job")
    assert job_row(env, job_id)["result"]["secrets_generated"] == ["a"]


def test_a_due_secret_is_rotated_at_the_next_tick_with_no_caller(
    env: dict[str, str], workers: Callable[..., subprocess.Popen[str]], tmp_path: Path
) -> None:
    config = write_definition(tmp_path, {"version": "1.0", "secrets": [file_secret("a", rotation_period="30d")]})
    env = {**env, "SERVICE_CONFIG": str(config), "SERVICE_ROTATION_SCHEDULE": "* * * * *"}
    manage(env, "sync")
    lockfile = tmp_path / ".gitsecrets.lock"
    lock = json.loads(lockfile.read_text())
    created = lock["secrets"]["a"]["hash"]
    lock["secrets"]["a"]["created_at"] = lock["secrets"]["a"]["updated_at"] = "2020-01-01T00:00:00+00:00"
    lockfile.write_text(json.dumps(lock))
    workers(env)
    # A tick a minute; each worker's scheduler looks every 30 s.
    until(lambda: json.loads(lockfile.read_text())["secrets"]["a"]["hash"] != created,
          "the due secret was not rotated", seconds=240)
    # The lockfile is committed before the row that began with the write is completed.
    database = Path(env["SERVICE_DATA_DIR"]) / "service.sqlite3"
    query = "SELECT user, success, details FROM audit_auditentry WHERE action = 'execute_rotation'"
    until(lambda: all(json.loads(details).get("state") != "started" for *_, details in sqlite_rows(database, query)),
          "the rotation's row was never completed")
    rows = sqlite_rows(database, query)
    assert [(user, success) for user, success, _ in rows] == [("scheduler", 1)], rows


def test_a_job_killed_mid_write_ends_failed_once_a_worker_starts_again(
    env: dict[str, str], workers: Callable[..., subprocess.Popen[str]], tmp_path: Path
) -> None:
    manage(env, "migrate", "-v", "0")
    # The write waits for the lockfile's lock, after its audit row began.
    held = acquire_file_lock(tmp_path / ".gitsecrets.lock.lck", 5, "the test's lock")
    try:
        job_id = manage(env, "shell", "-c", SUBMIT).stdout.split()[-1]
        first = workers()
        until(lambda: job_row(env, job_id)["audit_row"] is not None, "the job never began its write")
        os.kill(int(job_row(env, job_id)["worker"].rpartition(":")[2]), signal.SIGKILL)
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=60)
        assert job_row(env, job_id)["state"] == "running"
        workers()
        until(lambda: job_row(env, job_id)["state"] != "running", "the dead job stayed running")
    finally:
        held.release()
    row = job_row(env, job_id)
    assert (row["state"], row["status"], row["result"]["error"]) == ("failed", 503, "Service unavailable")
    database = Path(env["SERVICE_DATA_DIR"]) / "service.sqlite3"
    audit = sqlite_rows(database, "SELECT id, success, details FROM audit_auditentry WHERE action = 'sync'")
    assert len(audit) == 1
    details = json.loads(audit[0][2])
    assert (audit[0][0], audit[0][1], details.get("error")) == (row["audit_row"], 0, "worker_died"), details
    assert not (tmp_path / "out/app.env").exists()


def test_killing_the_worker_command_leaves_none_of_its_processes(
    env: dict[str, str], workers: Callable[..., subprocess.Popen[str]]
) -> None:
    manage(env, "migrate", "-v", "0")
    worker = workers()
    job_id = manage(env, "shell", "-c", SUBMIT).stdout.split()[-1]
    until(lambda: job_row(env, job_id)["state"] == "succeeded", "the worker never ran the job")
    cluster = _descendants(worker.pid)
    assert cluster
    worker.kill()
    worker.wait()
    until(lambda: not any(Path(f"/proc/{pid}").exists() and "zombie" not in _status(pid) for pid in cluster),
          "the cluster's processes outlived the worker command", seconds=30)


def _descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            found += [int(child), *_descendants(int(child))]
    return found


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"
