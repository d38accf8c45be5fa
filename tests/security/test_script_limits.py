"""Script generators (SERVICE_ALLOW_SCRIPTS) get a minimal environment, a bounded output and a
deadline that covers everything they start."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import GeneratorError
from secretsapi.service.generators import generate
from tests.processes.live import API_KEY, LiveServer, server_env

REPO = Path(__file__).resolve().parents[2]


def script(**config: Any) -> str:
    return generate(GeneratorSpec("script", config), allow_scripts=True)


@pytest.mark.slow
def test_script_does_not_see_the_servers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", "sentinel-key-7f3a")
    assert script(command="printenv SERVICE_API_KEY || echo absent", shell=True) == "absent"


@pytest.mark.slow
def test_script_sees_what_the_definition_declares_and_path() -> None:
    value = script(command='echo "$TOKEN:${PATH:+path}"', shell=True, env={"TOKEN": "declared"})
    assert value == "declared:path"


@pytest.mark.slow
def test_a_daemonized_grandchild_cannot_hold_the_request_past_the_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "escapee.pid"
    started = time.monotonic()
    try:
        with pytest.raises(GeneratorError, match=r"timed out after 2 s"):
            # setsid leaves the process group, keeping stdout open for 25 s.
            script(command=f"setsid sleep 25 & echo $! > {pid_file}; echo value", shell=True, timeout=2)
        assert time.monotonic() - started < 10  # a hang guard, not a timing
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.mark.slow
def test_an_output_bomb_fails_cleanly_in_bounded_memory() -> None:
    # In a child process capped at 1.5 GB, so that without the bound the machine is not hurt.
    code = f"""
import json, resource, sys
sys.path.insert(0, {str(REPO)!r})
resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
import yaml

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import GeneratorError
from secretsapi.service.generators import generate
from tests.processes.live import API_KEY, LiveServer, server_env
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    generate(GeneratorSpec("script", {{"command": "yes", "timeout": 5}}), allow_scripts=True)
    error = None
except GeneratorError as exc:
    error = exc.message
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"error": error, "growth_kb": after - before}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert re.fullmatch(r"script command 'yes' printed more than \d+ bytes", report["error"] or "")
    assert report["growth_kb"] < 100 * 1024


@pytest.mark.slow
def test_an_ordinary_script_still_gives_its_output() -> None:
    assert script(command=sys.executable, args=["-c", "print('tok-123')"]) == "tok-123"


@pytest.mark.slow
def test_what_a_script_left_running_in_its_group_is_killed_when_it_exits(tmp_path: Path) -> None:
    pid_file = tmp_path / "leftover.pid"
    assert script(command=f"sleep 25 >/dev/null 2>&1 & echo $! > {pid_file}; echo v", shell=True) == "v"
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_a_real_server_keeps_its_key_from_scripts_and_its_deadline(
    tmp_path: Path, servers: Callable[..., LiveServer]
) -> None:
    pid_file = tmp_path / "escapee.pid"

    def script_secret(name: str, command: str, timeout: int = 30) -> dict[str, Any]:
        return {"name": name, "kind": "script", "config": {"command": command, "shell": True, "timeout": timeout},
                "targets": [{"provider": "local", "kind": "file", "config": {"path": f"out/{name}.env"}}]}

    config = tmp_path / "Secretfile.yml"
    config.write_text(yaml.safe_dump({"version": "1.0", "secrets": [
        script_secret("leak", "printenv SERVICE_API_KEY || echo absent"),
        script_secret("escape", f"setsid sleep 25 & echo $! > {pid_file}; echo value", timeout=2),
    ]}))
    env = server_env(data_dir=tmp_path / "data", config=config, extra={"SERVICE_ALLOW_SCRIPTS": "true"})
    server = servers(env, tmp_path / "serve.log")
    started = time.monotonic()
    try:
        status, body = server.call("POST", "/sync", {}, timeout=60)
        assert time.monotonic() - started < 15  # a hang guard: before, the escapee held it 25 s
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert status in (200, 207), body
    assert (tmp_path / "out" / "leak.env").read_text() == "leak=absent\n"
    assert API_KEY not in json.dumps(body)
    assert not (tmp_path / "out" / "escape.env").exists()
