"""``manage.py apikey create`` on a fresh database (issue 25, point 7) printed a traceback (no
such table). It migrates first, as ``serve`` and the engine commands do; a database it cannot
reach is one line and exit 1, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes.live import ROOT, free_port, server_env

pytestmark = pytest.mark.slow


def apikey(tmp_path: Path, *args: str, database_url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = server_env(data_dir=tmp_path / "data", config=tmp_path / "Secretfile.yml", database_url=database_url)
    return subprocess.run([sys.executable, "manage.py", "apikey", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_apikey_create_on_a_fresh_database_migrates_and_prints_the_key(tmp_path: Path) -> None:
    done = apikey(tmp_path, "create", "ci", "--scope", "read")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("sk_")
    assert "Traceback" not in done.stderr
    listed = apikey(tmp_path, "list")
    assert "\nci\tread\t" in listed.stdout


def test_apikey_against_an_unreachable_database_is_one_line(tmp_path: Path) -> None:
    url = f"postgres://nobody:nothing@127.0.0.1:{free_port()}/nothing?connect_timeout=2"
    done = apikey(tmp_path, "create", "ci", "--scope", "read", database_url=url)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("CommandError: database error: ")
