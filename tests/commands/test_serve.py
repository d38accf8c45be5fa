"""``manage.py serve`` as a real gunicorn process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes.live import free_port, http, wait_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    env = {
        **os.environ,
        "SERVICE_DATA_DIR": str(tmp_path / "data"),
        "SERVICE_API_KEY": "serve-test-key",
        "SERVICE_CONFIG": str(ROOT / "examples" / "Secretfile.yml"),
        "SERVICE_LOCKFILE": str(tmp_path / "lock.json"),
    }
    env.pop("DATABASE_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "2"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/health")
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


@pytest.mark.slow
def test_serve_answers_health_and_stops_on_sigterm(server: tuple[subprocess.Popen[str], int]) -> None:
    proc, port = server
    status, _, body = http("GET", f"http://127.0.0.1:{port}/health")
    assert status == 200 and body["status"] == "healthy"
    status, headers, body = http("GET", f"http://127.0.0.1:{port}/audit/logs", headers={"X-API-Key": "wrong"})
    assert status == 401 and "WWW-Authenticate" in headers and set(body) == {"error", "detail", "timestamp"}
    status, _, body = http("GET", f"http://127.0.0.1:{port}/audit/logs?action=authenticate",
                           headers={"X-API-Key": "serve-test-key"})
    assert status == 200 and body["entries"][0]["details"]["reason"] == "invalid"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


@pytest.mark.slow
def test_serve_warns_loudly_in_insecure_mode(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "SERVICE_DATA_DIR": str(tmp_path), "SERVICE_CONFIG": str(tmp_path / "none.yml")}
    env.pop("SERVICE_API_KEY", None)
    env.pop("DATABASE_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "1"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/health")
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "INSECURE MODE" in output


def test_serve_refuses_a_bad_port() -> None:
    result = subprocess.run([sys.executable, "manage.py", "serve", "--port", "70000"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--port" in result.stderr
