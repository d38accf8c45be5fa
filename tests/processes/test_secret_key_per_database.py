"""Two hosts, one database: a host that generated its own SECRET_KEY is refused at start, naming
the fix; given the first host's key (SERVICE_SECRET_KEY_FILE) it starts."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.processes.live import ROOT, LiveServer, free_port, server_env, write_definition

pytestmark = pytest.mark.slow


def host(tmp_path: Path, name: str, database: Path, **extra: str) -> dict[str, str]:
    """A host of its own (its data folder) on the shared database."""
    (tmp_path / name).mkdir(exist_ok=True)
    config = write_definition(tmp_path / name, {"version": "1.0", "secrets": []})
    return server_env(data_dir=tmp_path / name / "data", config=config, database_url=f"sqlite:///{database}",
                      secret_key=None, extra=extra)


def test_a_second_host_with_its_own_generated_key_is_refused_until_given_the_first_ones(
        tmp_path: Path, servers: Callable[..., LiveServer]) -> None:
    database = tmp_path / "shared.sqlite3"
    first = servers(host(tmp_path, "first", database), tmp_path / "first.log")
    first.stop()
    second = host(tmp_path, "second", database)
    for command in (["serve", "--port", str(free_port())], ["worker"]):
        refused = subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=second, capture_output=True,
                                 text=True, timeout=120, check=False)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "This host's SECRET_KEY is not the one this database was first started with" in refused.stderr
        assert "SERVICE_SECRET_KEY_FILE" in refused.stderr
    # The key itself never appears, the second host's nor the first's.
    for key_file in (tmp_path / "first" / "data" / "secret_key", tmp_path / "second" / "data" / "secret_key"):
        assert key_file.read_text().strip() not in refused.stderr
    given = host(tmp_path, "second", database, SERVICE_SECRET_KEY_FILE=str(tmp_path / "first" / "data" / "secret_key"))
    assert servers(given, tmp_path / "second.log").call("GET", "/health")[0] == 200


def test_accept_secret_key_makes_a_new_key_the_databases(tmp_path: Path, servers: Callable[..., LiveServer]) -> None:
    database = tmp_path / "shared.sqlite3"
    servers(host(tmp_path, "first", database), tmp_path / "first.log").stop()
    second = host(tmp_path, "second", database)
    accepted = subprocess.run([sys.executable, "manage.py", "accept_secret_key"], cwd=ROOT, env=second,
                              capture_output=True, text=True, timeout=120, check=False)
    assert accepted.returncode == 0, accepted.stderr
    assert servers(second, tmp_path / "second.log").call("GET", "/health")[0] == 200
    refused = subprocess.run([sys.executable, "manage.py", "worker"], cwd=ROOT, env=host(tmp_path, "first", database),
                             capture_output=True, text=True, timeout=120, check=False)
    assert refused.returncode == 1 and "not the one this database was first started with" in refused.stderr
