"""Several workers on PostgreSQL (as on several hosts sharing it): each job runs exactly once,
and a SIGKILLed worker's job is taken back by another worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import file_secret
from tests.processes.live import ROOT, pg_rows, run_in_django, server_env, write_definition

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SUBMIT = """
from secretsapi import operations
for _ in range(%d):
    operations.enqueue("check_policy", {"fail_on_warning": False, "var_files": []}, actor="ci")
print("queued")
"""


PAGE = """
from jobs import queue
mine = queue.page(owner="ci", everyone=False, operations=["check_policy"], limit=25, offset=0, state="succeeded")
other = queue.page(owner="mallory", everyone=False, operations=["check_policy"], limit=25, offset=0)
none = queue.page(owner="ci", everyone=False, operations=["sync"], limit=25, offset=0)
print(f"{len(mine)},{len(other)},{len(none)}")
"""


@pytest.fixture
def env(pg_migrated: str, tmp_path: Path) -> dict[str, str]:
    config = write_definition(tmp_path, {"version": "1.0", "secrets": [file_secret("a")]})
    return server_env(data_dir=tmp_path / "data", config=config, database_url=pg_migrated,
                      extra={"SERVICE_WORKER_HEARTBEAT_SECONDS": "1", "SERVICE_JOB_WORKERS": "3"})


@pytest.fixture
def started(env: dict[str, str]) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def worker(env: dict[str, str], started: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "manage.py", "worker"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    started.append(proc)
    return proc


def test_three_workers_run_each_of_forty_jobs_exactly_once(
    env: dict[str, str], pg_migrated: str, tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    queued = run_in_django(pg_migrated, Path(env["SERVICE_DATA_DIR"]), SUBMIT % 40)
    assert "queued" in queued.stdout, queued.stderr[-2000:]
    for _ in range(3):
        worker(env, started)
    deadline = time.monotonic() + 180
    while pg_rows(pg_migrated, "SELECT count(*) FROM django_tasks_database_dbtaskresult "
                               "WHERE status = 'SUCCESSFUL'") != [(40,)]:
        assert time.monotonic() < deadline, "the jobs did not all run"
        assert all(p.poll() is None for p in started), "a worker exited"
        time.sleep(0.2)
    claims = pg_rows(pg_migrated, "SELECT jsonb_array_length(worker_ids) FROM django_tasks_database_dbtaskresult")
    assert sorted({n for (n,) in claims}) == [1]
    assert pg_rows(pg_migrated, "SELECT count(*) FROM audit_auditentry WHERE action = 'check_policy'") == [(40,)]
    runners = pg_rows(pg_migrated, "SELECT DISTINCT worker_ids->>0 FROM django_tasks_database_dbtaskresult")
    assert len({row[0].split(":")[1] for row in runners}) > 1  # more than one worker process took jobs
    # A reader's page filters on the request's JSON (jsonb here): its own jobs, of its operations.
    listed = run_in_django(pg_migrated, Path(env["SERVICE_DATA_DIR"]), PAGE)
    assert listed.stdout.split()[-1] == "25,0,0", listed.stderr[-2000:]


def test_a_sigkilled_worker_s_job_is_taken_back_by_another_worker(
    env: dict[str, str], pg_migrated: str, started: list[subprocess.Popen[bytes]]
) -> None:
    first = worker(env, started)
    deadline = time.monotonic() + 60
    # The runner of the reads queue (the one whose job is left running below) has beaten: a
    # worker's runners start one after another.
    while pg_rows(pg_migrated, "SELECT count(*) FROM jobs_workerbeat WHERE queue LIKE %s", ("%-reads",)) == [(0,)]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    # A job left running by the dead worker, before it wrote anything (what a kill mid-check leaves).
    left = run_in_django(pg_migrated, Path(env["SERVICE_DATA_DIR"]), """
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from jobs.models import WorkerBeat
from secretsapi import operations
job = operations.enqueue("check_policy", {"fail_on_warning": False, "var_files": []}, actor="ci")
dead = WorkerBeat.objects.filter(queue__endswith="-reads").first()
DBTaskResult.objects.filter(pk=job.id).update(status="RUNNING", started_at=timezone.now(), worker_ids=[dead.id])
WorkerBeat.objects.filter(pk=dead.pk).update(job=job.id)
""")
    assert left.returncode == 0, left.stderr[-2000:]
    worker(env, started)
    deadline = time.monotonic() + 90
    while pg_rows(pg_migrated, "SELECT status FROM django_tasks_database_dbtaskresult") != [("SUCCESSFUL",)]:
        assert time.monotonic() < deadline, "the dead worker's job was not taken back"
        time.sleep(0.2)
    [(claims,)] = pg_rows(pg_migrated, "SELECT jsonb_array_length(worker_ids) FROM django_tasks_database_dbtaskresult")
    assert claims == 2
