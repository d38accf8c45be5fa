"""kill -9 of the whole server (gunicorn master and worker) in the middle of syncs and rotations
of 2,000 secrets: files stay parseable, drift sees every value the lockfile does not know, and
repeating the interrupted operation makes everything consistent again; an operation that changed
anything before it died has its audit row."""

from __future__ import annotations

import contextlib
import random
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.processes.live import (
    LiveServer,
    many_secrets,
    read_lock,
    read_targets,
    server_env,
    unknown_values,
    write_definition,
)

pytestmark = pytest.mark.slow

SECRETS = 2000
FILES = 20
SYNC_CRASHES = 8
ROTATION_CRASHES = 2
SEED = 20260


def crash_during(server: LiveServer, path: str, body: dict[str, Any], delay: float) -> None:
    """Send the request, kill -9 the server ``delay`` seconds later, whatever it is doing."""
    thread = threading.Thread(target=lambda: _ignore_errors(server, path, body), daemon=True)
    thread.start()
    time.sleep(delay)
    server.kill()
    thread.join(timeout=60)
    assert not thread.is_alive()


def _ignore_errors(server: LiveServer, path: str, body: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        server.call("POST", path, body, timeout=60)  # the connection dies with the server


def _start_from_nothing(project: Path) -> None:
    (project / ".gitsecrets.lock").unlink(missing_ok=True)
    shutil.rmtree(project / "out", ignore_errors=True)


def files_now(project: Path) -> dict[str, bytes]:
    """The lockfile and the target files (not crashed writers' temp files)."""
    found = {p: p.read_bytes() for p in (project / "out").rglob("*") if p.is_file() and not p.name.endswith(".tmp")} \
        if (project / "out").exists() else {}
    lock = project / ".gitsecrets.lock"
    if lock.exists():
        found[lock] = lock.read_bytes()
    return {str(p): data for p, data in found.items()}


def audit_rows(server: LiveServer, action: str) -> list[dict[str, Any]]:
    status, page = server.call("GET", f"/audit/logs?action={action}&limit=1000")
    assert status == 200
    return list(page["entries"])


def assert_files_valid(project: Path) -> None:
    read_lock(project / ".gitsecrets.lock")  # absent, or valid JSON with a secrets object
    read_targets(project)  # every target file parses in its format


def test_kill_9_during_syncs_and_rotations_never_corrupts_files_or_hides_a_value_from_drift(
    tmp_path: Path, servers: Callable[..., LiveServer]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    definition = write_definition(project, many_secrets(
        SECRETS, files=FILES, kinds=("random_hex", "random_password"), rotation_period="90d"))
    # One key sends every request, and the jobs a killed worker held are queued again when its
    # successor starts: the bound on one key's jobs (SERVICE_JOBS_PER_KEY, tested on its own in
    # tests/security/test_job_queues_live.py) is not what this test is about.
    env = server_env(data_dir=tmp_path / "data", config=definition, extra={"SERVICE_JOBS_PER_KEY": "200"})
    log = tmp_path / "serve.log"
    rng = random.Random(SEED)
    server = servers(env, log)
    status, result = server.call("POST", "/sync", {})
    assert status == 200 and len(result["secrets_generated"]) == SECRETS
    # How long each operation takes on a warm server: the kill falls anywhere in that window.
    took: dict[tuple[str, bool], float] = {}
    for path, body in (("/sync", {}), ("/sync", {"force": True}), ("/rotation/execute", {"force": True})):
        if not body:
            _start_from_nothing(project)
        started = time.monotonic()
        assert server.call("POST", path, body)[0] == 200
        took[path, bool(body)] = time.monotonic() - started

    plan = [("/sync", {} if i % 2 == 0 else {"force": True}) for i in range(SYNC_CRASHES)]
    plan += [("/rotation/execute", {"force": True})] * ROTATION_CRASHES
    changed_rounds = 0
    for round_no, (path, body) in enumerate(plan):
        if not body:
            _start_from_nothing(project)
        action = "sync" if path == "/sync" else "execute_rotation"
        rows_before, files_before = len(audit_rows(server, action)), files_now(project)
        crash_during(server, path, body, rng.uniform(0.0, took[path, bool(body)]))

        assert_files_valid(project)
        unknown = unknown_values(project, project / ".gitsecrets.lock")
        server = servers(env, log)
        if files_now(project) != files_before:  # the operation changed something: it has its row
            changed_rounds += 1
            rows = audit_rows(server, action)
            assert len(rows) == rows_before + 1, round_no
            assert rows[0]["success"] or rows[0]["details"].get("state") == "started", rows[0]
        status, drift = server.call("POST", "/drift/check", {})
        assert status == 200
        hidden = unknown - set(drift["secrets_with_drift"])
        assert not hidden, (round_no, sorted(hidden))

        status, result = server.call("POST", path, body)  # repeat the interrupted operation
        assert status == 200, result
        assert not result.get("secrets_failed") and not result.get("failed"), result
        status, drift = server.call("POST", "/drift/check", {})
        assert status == 200 and drift["has_drift"] is False, (round_no, drift["details"][:3])
        assert unknown_values(project, project / ".gitsecrets.lock") == set()
        assert len(read_lock(project / ".gitsecrets.lock")) == SECRETS
    assert changed_rounds >= len(plan) // 2  # most kills fell after the first write (fixed seed)
