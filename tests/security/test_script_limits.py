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
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import GeneratorError
from secretsapi.service.generators import generate

REPO = Path(__file__).resolve().parents[2]


def script(**config: Any) -> str:
    return generate(GeneratorSpec("script", config), allow_scripts=True)


def test_script_does_not_see_the_servers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_API_KEY", "sentinel-key-7f3a")
    assert script(command="printenv SERVICE_API_KEY || echo absent", shell=True) == "absent"


def test_script_sees_what_the_definition_declares_and_path() -> None:
    value = script(command='echo "$TOKEN:${PATH:+path}"', shell=True, env={"TOKEN": "declared"})
    assert value == "declared:path"


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


def test_an_output_bomb_fails_cleanly_in_bounded_memory() -> None:
    # In a child process capped at 1.5 GB, so that without the bound the machine is not hurt.
    code = f"""
import json, resource, sys
sys.path.insert(0, {str(REPO)!r})
resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import GeneratorError
from secretsapi.service.generators import generate
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


def test_an_ordinary_script_still_gives_its_output() -> None:
    assert script(command=sys.executable, args=["-c", "print('tok-123')"]) == "tok-123"


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
