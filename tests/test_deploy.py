"""The production layout in deploy/ passes each tool's own checker: ``nginx -t`` for the proxy,
``systemd-analyze verify`` for the units, ``docker-compose config`` for the compose file. Each is
skipped where its tool is not installed. (The proxy is also run for real: tests/security/test_proxy.py.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.processes.live import ROOT

DEPLOY = ROOT / "deploy"


def _tool(name: str) -> str:
    path = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def test_the_shipped_nginx_config_passes_nginx_t(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the shipped config names a user and a pid file under /run: nginx -t needs root")
    result = subprocess.run(
        [_tool("nginx"), "-t", "-c", str(DEPLOY / "nginx" / "nginx.conf"), "-e", str(tmp_path / "error.log")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr


@pytest.mark.parametrize("unit", sorted(path.name for path in (DEPLOY / "systemd").glob("*.service")))
def test_each_systemd_unit_passes_systemd_analyze_verify(unit: str) -> None:
    result = subprocess.run(
        [_tool("systemd-analyze"), "verify", "--man=no", str(DEPLOY / "systemd" / unit)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    # The only finding allowed: the install folder of README "Production" is not on this machine.
    findings = [line for line in result.stderr.splitlines()
                if line.strip() and "/opt/secretsapi/.venv/bin/python is not executable" not in line]
    assert findings == []


def test_the_compose_file_passes_docker_compose_config() -> None:
    env = {**os.environ, "SERVICE_API_KEY": "k", "POSTGRES_PASSWORD": "p"}
    result = subprocess.run(
        [_tool("docker-compose"), "-f", str(DEPLOY / "compose.yaml"), "config", "--services"],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == ["db", "proxy", "web", "worker"]


def test_the_image_copies_every_package_the_service_runs_and_nothing_missing() -> None:
    """No Docker daemon is needed to check what the Dockerfile takes from the repository."""
    copied: set[str] = set()
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not words[1].startswith("--from"):
            copied.update(source.rstrip("/") for source in words[1:-1])
    assert all((ROOT / source).exists() for source in copied), copied
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "bench"}
    assert packages <= copied
    assert {"manage.py", "requirements.txt"} <= copied
