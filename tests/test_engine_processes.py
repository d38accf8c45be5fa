"""Long operations in engine processes: what crosses pickles intact, the API answers alike, a
killed engine process is a clear 503 with its audit row, and the next operation gets a new one."""

from __future__ import annotations

import inspect
import os
import pickle
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi import actions, engine_processes
from secretsapi.service import errors
from secretsapi.service.errors import ServiceError
from tests.factories import Project, definition, file_secret

SAMPLE_ARGUMENTS = {
    "message": "what happened", "errors": ["one", "two"], "name": "db", "reason": "bad hash",
    "details": {"written_targets": {"db": ["local/file/out/app.env"]}},
}


def every_service_error() -> list[type[ServiceError]]:
    return [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, ServiceError)]


@pytest.mark.parametrize("cls", every_service_error(), ids=lambda c: c.__name__)
def test_every_engine_error_survives_a_pickle_round_trip(cls: type[ServiceError]) -> None:
    parameters = list(inspect.signature(cls.__init__).parameters)[1:]
    arguments: list[Any] = [SAMPLE_ARGUMENTS[p] for p in parameters]
    error = cls(*arguments)
    error.audited = True  # type: ignore[attr-defined]

    copy = pickle.loads(pickle.dumps(error))  # noqa: S301 - bytes this test just made

    assert type(copy) is cls
    assert (copy.message, copy.args, copy.code, str(copy)) == (error.message, error.args, error.code, str(error))
    assert vars(copy) == vars(error)


def test_the_workspace_the_actions_build_survives_a_pickle_round_trip(project: Project) -> None:
    ws = actions.workspace(var_files=["vars.yml"])

    assert pickle.loads(pickle.dumps(ws)) == ws  # noqa: S301 - bytes this test just made


def two_secrets(project: Project) -> None:
    project.write(definition(file_secret("db", kind="random_hex"), file_secret("api", path="out/api.env")))


OPERATIONS: list[tuple[str, dict[str, Any]]] = [
    ("/sync", {"dry_run": True}),
    ("/rotation/check", {}),
    ("/policy/check", {}),
    ("/drift/check", {}),
    ("/config/render", {}),
    ("/config/validate", {"config": {"version": "1.0", "secrets": [{"name": "x", "kind": "uuid", "targets": []}]}}),
]


def answers(client: APIClient) -> list[tuple[int, Any]]:
    out = []
    for path, body in OPERATIONS:
        response = client.post(path, body, format="json")
        out.append((response.status_code, response.json()))
    return out


def test_operations_answer_alike_in_an_engine_process_and_in_the_worker(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    two_secrets(project)
    assert authed_api.post("/sync", {}, format="json").status_code == 200
    in_worker = answers(authed_api)

    settings.SERVICE_ENGINE_PROCESSES = 1
    engine_processes.start()
    try:
        in_process = answers(authed_api)
        elsewhere = engine_processes.run(os.getpid)
    finally:
        engine_processes.stop()

    assert elsewhere != os.getpid()
    assert in_process == in_worker


def test_a_sync_in_an_engine_process_writes_its_targets_lockfile_and_audit_row(
    authed_api: APIClient, project: Project, engine_pool: None
) -> None:
    two_secrets(project)

    response = authed_api.post("/sync", {}, format="json")

    assert response.status_code == 200
    assert sorted(response.json()["secrets_generated"]) == ["api", "db"]
    assert sorted(project.lock()["secrets"]) == ["api", "db"]
    row = AuditEntry.objects.get(action="sync")
    assert row.success and sorted(row.details["generated"]) == ["api", "db"] and "state" not in row.details


def test_an_engine_error_from_an_engine_process_keeps_its_status_and_row(
    authed_api: APIClient, project: Project, engine_pool: None
) -> None:
    two_secrets(project)

    response = authed_api.post("/sync", {"secret_name": "nope"}, format="json")

    assert response.status_code == 404
    assert "'nope' is not defined" in response.json()["detail"]
    row = AuditEntry.objects.get(action="sync")
    assert not row.success and row.details["error"] == "secret_not_defined"


def slow_script_project(project: Project, marker: Path) -> None:
    # The script signals that it runs, then outlives any reasonable wait of the test.
    script = {"name": "slow", "kind": "script",
              "config": {"command": f"touch {marker} && sleep 8 && echo value", "shell": True, "timeout": 60},
              "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/slow.env"}}]}
    project.write(definition(script, file_secret("db", kind="random_hex")))


def wait_for(path: Path, limit_s: float = 20) -> None:
    deadline = time.monotonic() + limit_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_a_killed_engine_process_is_a_clear_503_with_its_audit_row_and_the_next_sync_gets_a_new_one(
    authed_api: APIClient, project: Project, settings: Any, engine_pool: None, tmp_path: Path
) -> None:
    settings.SERVICE_ALLOW_SCRIPTS = True
    marker = tmp_path / "script-started"
    slow_script_project(project, marker)
    engine_pid = engine_processes.run(os.getpid)

    def kill_once_the_script_runs() -> None:
        wait_for(marker)
        os.kill(engine_pid, signal.SIGKILL)

    # The request stays on the test's thread (and its database transaction); another one kills.
    killer = threading.Thread(target=kill_once_the_script_runs)
    killer.start()
    response = authed_api.post("/sync", {}, format="json")
    killer.join(20)

    assert response.status_code == 503
    assert response.json()["error"] == "Service unavailable"
    assert "engine process" in response.json()["detail"] and "drift check" in response.json()["detail"]
    row = AuditEntry.objects.get(action="sync")
    assert not row.success and row.details["error"] == "engine_process_died"

    settings.SERVICE_ALLOW_SCRIPTS = False
    project.write(definition(file_secret("db", kind="random_hex")))
    again = authed_api.post("/sync", {}, format="json")
    assert again.status_code == 200 and again.json()["secrets_generated"] == ["db"]
    assert engine_processes.run(os.getpid) not in (engine_pid, os.getpid())


def test_an_engine_process_that_died_idle_is_replaced_without_failing_the_next_operation(
    authed_api: APIClient, project: Project, engine_pool: None
) -> None:
    two_secrets(project)
    engine_pid = engine_processes.run(os.getpid)
    os.kill(engine_pid, signal.SIGKILL)
    # The pool marks itself broken before it reaps the dead process.
    deadline = time.monotonic() + 10
    while Path(f"/proc/{engine_pid}").exists():
        assert time.monotonic() < deadline, "the dead engine process was never reaped"
        time.sleep(0.05)

    response = authed_api.post("/sync", {}, format="json")

    assert response.status_code == 200 and sorted(response.json()["secrets_generated"]) == ["api", "db"]


def test_the_command_line_runs_the_engine_in_its_own_process(project: Project) -> None:
    # No start(): management commands (and tests) call the engine directly.
    assert engine_processes.run(os.getpid) == os.getpid()
