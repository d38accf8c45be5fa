"""A running service for ``secretsctl --addr``: pytest-django's live server (real HTTP on a
loopback port, in this process, jobs run as they are queued) serving the two-environment project
of ``tests/cli/conftest.py``, with the test key. ``both`` runs one command line in the local mode
and against the service, on the same files, so their outputs can be compared."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import keyring.core
import pytest
from click.testing import CliRunner, Result
from keyring.backends import fail

from secretsapi.cli import handover
from secretsapi.cli.app import cli
from secretsapi.cli.remote import client
from tests.factories import Project


def invoke(*args: str, env: dict[str, str | None] | None = None, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, input=stdin, catch_exceptions=False)


@pytest.fixture
def served(lanes: Project, live_server: Any, api_key: str, monkeypatch: pytest.MonkeyPatch,
           tmp_path_factory: pytest.TempPathFactory) -> str:
    """The service's address; the key in SECRETSCTL_API_KEY; the working folder the project's;
    no stored login from the user running the tests (XDG_CONFIG_HOME is a fresh folder)."""
    monkeypatch.chdir(lanes.root)
    monkeypatch.setenv("SECRETSCTL_API_KEY", api_key)
    monkeypatch.delenv("SECRETSCTL_ADDR", raising=False)
    monkeypatch.delenv("SECRETSCTL_PROJECT", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    # No keyring of the machine's: login's keys go to the file under XDG_CONFIG_HOME.
    monkeypatch.setattr(keyring.core, "_keyring_backend", fail.Keyring())  # type: ignore[no-untyped-call]
    # One request at a time: the live server's in-memory SQLite (shared cache) refuses a second
    # writer at once ("table is locked") where a file database waits its turn; the status's four at
    # a time against a real server is tests/processes/test_remote_cli.py's.
    monkeypatch.setattr(client, "CONNECTIONS", 1)
    return str(live_server.url)


@pytest.fixture
def local_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every hand-over to the local mode's operations: a remote run must make none."""
    runs: list[str] = []
    real = handover.operations

    def counted() -> Any:
        runs.append("local")
        return real()

    monkeypatch.setattr(handover, "operations", counted)
    return runs


@pytest.fixture
def remote(served: str, local_runs: list[str]) -> Callable[..., Result]:
    """``secretsctl --addr <the service> ...``, which must not run anything locally."""
    def run(*args: str, **kw: Any) -> Result:
        before = len(local_runs)
        result = invoke("--addr", served, *args, **kw)
        assert len(local_runs) == before, "the remote mode ran the operation on local files"
        return result
    return run


@pytest.fixture
def both(remote: Callable[..., Result]) -> Callable[..., tuple[Result, Result]]:
    """The same command line run locally, then against the service: (local, remote)."""
    def run(*args: str) -> tuple[Result, Result]:
        return invoke(*args), remote(*args)
    return run


def data(result: Result) -> Any:
    return json.loads(result.stdout)
