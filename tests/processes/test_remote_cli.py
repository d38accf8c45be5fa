"""``secretsctl --addr`` as a CI job runs it: the installed program in its own process against a
real ``manage.py serve`` and its job worker, with a named key from ``manage.py apikey``. It logs
in, asks who it is, syncs, reads the status, finds drift and reads the audit log, and each step
exits as the local mode exits on the same files."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.factories import definition, file_secret
from tests.processes.live import ROOT, LiveServer, server_env, write_definition

pytestmark = pytest.mark.slow

SECRETSCTL = str(Path(sys.executable).with_name("secretsctl"))


@pytest.fixture
def service(tmp_path: Path, servers: Callable[..., LiveServer]) -> tuple[LiveServer, dict[str, str], str]:
    """The service, its environment (for the local mode on the same files) and a key named ci-deploy."""
    project = tmp_path / "project"
    project.mkdir()
    config = write_definition(project, definition(file_secret("db_password", rotation_period="30d"),
                                                  file_secret("api_key", "out/api.env")))
    env = server_env(data_dir=tmp_path / "data", config=config)
    server = servers(env, tmp_path / "serve.log")
    key = subprocess.run([sys.executable, "manage.py", "apikey", "create", "ci-deploy", "--scope", "read",
                          "--scope", "write", "--scope", "audit"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.strip()
    return server, env, key


def secretsctl(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SECRETSCTL, *args], cwd=Path(env["SERVICE_CONFIG"]).parent, env=env, input=stdin,
                          capture_output=True, text=True, timeout=180)


def client_env(tmp_path: Path, server: LiveServer) -> dict[str, str]:
    """A CI runner's environment: the address, a home of its own, nothing of the server's."""
    return {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path / "runner"),
            "XDG_CONFIG_HOME": str(tmp_path / "runner/.config"), "SECRETSCTL_ADDR": server.url,
            "SERVICE_CONFIG": str(tmp_path / "project/Secretfile.yml"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


def test_login_whoami_sync_status_drift_and_audit_from_a_ci_runner(
        tmp_path: Path, service: tuple[LiveServer, dict[str, str], str]) -> None:
    server, server_environ, key = service
    runner = client_env(tmp_path, server)
    logged_in = secretsctl(runner, "login", "--api-key-stdin", stdin=key + "\n")
    assert logged_in.returncode == 0, logged_in.stderr
    assert key not in logged_in.stdout + logged_in.stderr
    assert json.loads(secretsctl(runner, "whoami", "--json").stdout)["name"] == "ci-deploy"

    before = secretsctl(runner, "status")
    assert before.returncode == secretsctl(server_environ, "status").returncode == 2
    synced = secretsctl(runner, "sync", "--json")
    assert synced.returncode == 0 and sorted(json.loads(synced.stdout)["secrets_generated"]) == [
        "api_key", "db_password"]
    far, near = secretsctl(runner, "status"), secretsctl(server_environ, "status")
    assert (far.returncode, far.stdout) == (near.returncode, near.stdout) == (0, near.stdout)

    (tmp_path / "project/out/api.env").write_text("api_key=edited-by-hand\n")
    far, near = secretsctl(runner, "drift", "--json"), secretsctl(server_environ, "drift", "--json")
    assert (far.returncode, json.loads(far.stdout)) == (near.returncode, json.loads(near.stdout))
    assert far.returncode == 2

    rows = json.loads(secretsctl(runner, "audit", "-a", "sync", "--json").stdout)["entries"]
    assert [(row["user"], row["success"]) for row in rows] == [("ci-deploy", True)]


def test_a_key_without_the_scope_fails_as_a_local_error_does(
        tmp_path: Path, service: tuple[LiveServer, dict[str, str], str]) -> None:
    server, server_environ, _ = service
    reader = subprocess.run([sys.executable, "manage.py", "apikey", "create", "reader", "--scope", "read"], cwd=ROOT,
                            env=server_environ, capture_output=True, text=True, timeout=120, check=True).stdout.strip()
    result = secretsctl({**client_env(tmp_path, server), "SECRETSCTL_API_KEY": reader}, "sync")
    assert result.returncode == 1 and "'write' scope" in result.stderr
    assert not (tmp_path / "project/out").exists()


def test_a_stopped_service_is_exit_3(tmp_path: Path, service: tuple[LiveServer, dict[str, str], str]) -> None:
    server, _, key = service
    server.stop()
    result = secretsctl({**client_env(tmp_path, server), "SECRETSCTL_API_KEY": key}, "status")
    assert result.returncode == 3 and "cannot connect to" in result.stderr


def test_a_key_confined_to_one_project_drives_it_from_a_runner_and_nothing_else(
        tmp_path: Path, service: tuple[LiveServer, dict[str, str], str]) -> None:
    server, server_environ, _ = service
    billing = tmp_path / "billing"
    billing.mkdir()
    write_definition(billing, definition(file_secret("stripe_key", "out/stripe.env")))
    manage = {"cwd": ROOT, "env": server_environ, "capture_output": True, "text": True, "timeout": 120, "check": True}
    subprocess.run([sys.executable, "manage.py", "project", "add", "billing", str(billing / "Secretfile.yml")],
                   **manage)  # type: ignore[call-overload]
    key = subprocess.run([sys.executable, "manage.py", "apikey", "create", "ci-billing", "--scope", "read",
                          "--scope", "write", "--scope", "audit", "--project", "billing"],
                         **manage).stdout.strip()  # type: ignore[call-overload]
    runner = {**client_env(tmp_path, server), "SECRETSCTL_API_KEY": key}

    assert json.loads(secretsctl(runner, "whoami", "--json").stdout)["projects"] == ["billing"]
    synced = secretsctl(runner, "--project", "billing", "sync", "--json")
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout)["secrets_generated"] == ["stripe_key"]
    assert (billing / "out/stripe.env").is_file()
    # The default project is not this key's: refused as a project that does not exist, nothing written.
    refused = secretsctl(runner, "sync")
    assert refused.returncode == 1 and "project" in refused.stderr.lower(), refused.stderr
    assert not (tmp_path / "project/out").exists()
    rows = json.loads(secretsctl(runner, "--project", "billing", "audit", "-a", "sync", "--json").stdout)["entries"]
    assert [(row["user"], row["project"]) for row in rows] == [("ci-billing", "billing")]
