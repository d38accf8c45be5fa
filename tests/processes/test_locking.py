"""The cross-instance locks: what the service gets on SQLite and PostgreSQL, and that the
PostgreSQL advisory lock alone serializes processes, times out, and dies with its holder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from secretsapi import database_locks as locking
from secretsapi.actions import workspaces
from secretsapi.service.state import write
from secretsapi.service.workspace import Workspace
from tests.processes.live import ROOT


def test_sqlite_needs_no_extra_lock_and_the_workspace_gets_none() -> None:
    assert not locking.is_postgresql()
    assert locking.extra_lockfile_lock() is None
    assert workspaces.workspace().extra_lock is None


def test_the_workspace_enters_its_extra_lock_inside_the_file_lock_with_the_lockfile_path(tmp_path: Path) -> None:
    seen: list[tuple[str, Path, float]] = []

    @contextmanager
    def extra(path: Path, timeout: float) -> Iterator[None]:
        seen.append(("in", path, timeout))
        assert (tmp_path / ".gitsecrets.lock.lck").exists()
        yield
        seen.append(("out", path, timeout))

    ws = Workspace(tmp_path / "Secretfile.yml", lock_timeout=7.0, extra_lock=extra)
    with write.write_lock(ws.write_place):
        seen.append(("body", ws.lockfile_path, 0))
    lock = (tmp_path / ".gitsecrets.lock").absolute()
    assert seen == [("in", lock, 7.0), ("body", lock, 0), ("out", lock, 7.0)]


def test_advisory_keys_are_stable_signed_64_bit_and_distinct_per_path() -> None:
    a, b = locking.lockfile_key(Path("/srv/a/.gitsecrets.lock")), locking.lockfile_key(Path("/srv/b/.gitsecrets.lock"))
    assert a != b and -(2**63) <= a < 2**63
    assert a == locking.lockfile_key(Path("/srv/a/.gitsecrets.lock"))
    assert locking.advisory_key(locking.MIGRATION_LOCK_NAME) not in (a, b)


def _worker(database_url: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "DATABASE_URL": database_url, "SERVICE_DATA_DIR": str(Path(args[1]).parent / "data")}
    return subprocess.Popen([sys.executable, "-m", "tests.processes.advisory_worker", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.postgres
@pytest.mark.slow
def test_the_advisory_lock_alone_serializes_read_modify_writes_of_two_processes(
    tmp_path: Path, pg_database: str
) -> None:
    counter = tmp_path / "counter"
    procs = [_worker(pg_database, "count", str(counter), "150") for _ in range(2)]
    try:
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert counter.read_text() == "300"


@pytest.mark.postgres
@pytest.mark.slow
def test_the_advisory_lock_times_out_and_is_released_when_its_holder_is_killed(
    tmp_path: Path, pg_database: str
) -> None:
    lockfile = tmp_path / ".gitsecrets.lock"
    holder = _worker(pg_database, "hold", str(lockfile))
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        waiter = _worker(pg_database, "try", str(lockfile), "0.5")
        out, err = waiter.communicate(timeout=60)
        assert out.strip() == "timeout", err
        assert time.monotonic() - started < 30
        os.killpg(holder.pid, signal.SIGKILL)  # kill -9: PostgreSQL drops the session and its lock
        holder.wait(timeout=30)
        waiter = _worker(pg_database, "try", str(lockfile), "20")
        out, err = waiter.communicate(timeout=60)
        assert out.strip() == "acquired", err
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()
