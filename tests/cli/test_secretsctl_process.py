"""secretsctl as the installed program, in its own process: what only a process shows (its start
without Django for --help, --version and completion; a pipe whose reader goes away; --follow
until Ctrl-C)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.factories import definition

pytestmark = pytest.mark.slow

SECRETSCTL = str(Path(sys.executable).with_name("secretsctl"))
# Run in the program's own process: which modules did the start load?
LOADED = """
import sys
from secretsapi.cli.entry import main
try:
    main()
except SystemExit:
    pass
frameworks = sorted(m for m in sys.modules if m.split(".")[0] in ("django", "rest_framework"))
sys.stderr.write("\\nLOADED " + ",".join(frameworks))
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    many = [{"name": f"secret_{i:04d}", "kind": "uuid"} for i in range(3000)]
    (tmp_path / "Secretfile.yml").write_text(yaml.safe_dump(definition(*many)))
    return tmp_path


def environ(folder: Path, **extra: str) -> dict[str, str]:
    return {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(folder),
            "SERVICE_DATA_DIR": str(folder / ".data"), **extra}


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["sync", "--help"], ["audit", "--help"]])
def test_help_and_version_start_without_django(folder: Path, args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", LOADED, *args], cwd=folder, env=environ(folder),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip()
    assert done.stderr.rsplit("LOADED ", 1)[1] == ""


def test_completion_starts_without_django(folder: Path) -> None:
    env = environ(folder, _SECRETSCTL_COMPLETE="bash_complete", COMP_WORDS="secretsctl show secret_000",
                  COMP_CWORD="2")
    done = subprocess.run([sys.executable, "-c", LOADED], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert len(done.stdout.split()) == 10  # secret_0000 ... secret_0009
    assert done.stderr.rsplit("LOADED ", 1)[1] == ""


def piped(folder: Path, command: str, reader: str) -> subprocess.CompletedProcess[str]:
    """``secretsctl <command> | <reader>``, with secretsctl's exit status printed after the reader's output."""
    script = f"{SECRETSCTL} {command} | {reader}; echo \"status=${{PIPESTATUS[0]}}\""
    return subprocess.run(["bash", "-c", script], cwd=folder, env=environ(folder), capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.mark.parametrize("command", ["status", "status --json", "list secrets", "--help", "sync --help", "--version"])
def test_a_reader_that_went_away_gets_no_error_and_exit_141(folder: Path, command: str) -> None:
    # `true` reads nothing and exits at once: every write of secretsctl meets a closed pipe.
    done = piped(folder, command, "true")
    assert (done.stdout, done.stderr) == ("status=141\n", "")


def test_head_gets_the_first_line_and_nothing_is_said_on_stderr(folder: Path) -> None:
    done = piped(folder, "list secrets", "head -n 1")
    assert done.stdout.splitlines()[0].split() == ["NAME", "KIND", "ONE-TIME", "ROTATION", "TARGETS"]
    assert done.stderr == ""


def read_line(stream: subprocess.Popen[str], deadline: float) -> str:
    assert stream.stdout is not None
    ready, _, _ = select.select([stream.stdout], [], [], max(0.0, deadline - time.monotonic()))
    assert ready, "no line before the deadline"
    return stream.stdout.readline()


def test_follow_prints_the_last_rows_then_each_new_one_until_interrupted(folder: Path) -> None:
    env = environ(folder)
    subprocess.run([SECRETSCTL, "validate"], cwd=folder, env=env, capture_output=True, timeout=120, check=True)
    follower = subprocess.Popen([SECRETSCTL, "audit", "--follow", "--json", "--interval", "0.2", "-a",
                                 "validate_config"], cwd=folder, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        assert json.loads(read_line(follower, deadline))["action"] == "validate_config"
        subprocess.run([SECRETSCTL, "validate", "-q"], cwd=folder, env=env, capture_output=True, timeout=120,
                       check=True)
        assert json.loads(read_line(follower, deadline))["action"] == "validate_config"
        os.killpg(follower.pid, signal.SIGINT)
        # A bound, not a timing: once a run under a loaded host's CI took more than 30 s to exit.
        assert follower.wait(timeout=120) == 130
    finally:
        if follower.poll() is None:
            os.killpg(follower.pid, signal.SIGKILL)
            follower.wait()
    assert follower.stderr is not None and follower.stderr.read().strip() == "interrupted"
