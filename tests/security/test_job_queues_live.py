"""Reads never hold a write behind them (issue 36, item 7), as the attacker ran it: twelve async
drift checks from a `read` key held a writer's sync past 30 s (then 202). Now reads and writes
have queues and runners of their own, and a key's jobs waiting are bounded: past eight, 429."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.processes.live import LiveServer, many_secrets, server_env, sqlite_rows, write_definition

pytestmark = pytest.mark.slow


def test_twelve_drift_checks_of_a_read_key_do_not_hold_a_writer_s_sync(
    servers: Callable[..., LiveServer], tmp_path: Path
) -> None:
    config = write_definition(tmp_path, many_secrets(3000, 4))
    server = servers(server_env(data_dir=tmp_path / "data", config=config), tmp_path / "server.log")
    assert server.finished("/sync", {})[0] == 200
    reader = LiveServer(server.proc, server.port, server.log_path, headers={"X-API-Key": _key(tmp_path, "read")})
    answers = [reader.call("POST", "/drift/check", {"async": True})[0] for _ in range(12)]
    assert answers.count(202) == 8 and answers.count(429) == 4  # SERVICE_JOBS_PER_KEY
    started = time.monotonic()
    status, body = server.call("POST", "/sync", {"secret_name": "s1", "force": True})
    took = time.monotonic() - started
    assert status == 200, body
    database = tmp_path / "data" / "service.sqlite3"
    checks_left = sqlite_rows(database, "SELECT count(*) FROM django_tasks_database_dbtaskresult "
                                        "WHERE queue_name LIKE '%-reads' AND status IN ('READY', 'RUNNING')")[0][0]
    # The sync ended while drift checks were still waiting: it never queued behind them.
    assert checks_left > 0, f"every drift check ended first ({took:.1f} s): nothing shows the queues apart"


def _key(tmp_path: Path, scope: str) -> str:
    import os
    import subprocess
    import sys

    from tests.processes.live import ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    env["SERVICE_DATA_DIR"] = str(tmp_path / "data")
    out = subprocess.run([sys.executable, "manage.py", "apikey", "create", f"{scope}-key", "--scope", scope],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)
    return next(word for word in out.stdout.split() if word.startswith("sk_"))
