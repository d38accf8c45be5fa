"""The server's environment is not the definition's (issue 36, points 1 and 3).

The attacker can push ``Secretfile.yml`` and read the dotenv file it writes, nothing else. They
copied ``SERVICE_API_KEY`` (the full-scope key), ``DATABASE_URL`` and ``AWS_SECRET_ACCESS_KEY``
into that file with ``${NAME}`` in a static value, ``source: env`` and a secret named after the
variable (the upper-case override). In the service only the variables the operator lists in
SERVICE_DEFINITION_ENV are read, never the service's own, and a name it does not allow is an
unset one; the command line keeps SecretZero's rule (every variable) unless the list is set.
"""

from __future__ import annotations

import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from secretsapi.actions import workspaces
from tests.factories import TEST_KEY, Project, definition
from tests.processes.live import API_KEY, ROOT, LiveServer, server_env

KEY = TEST_KEY
AWS_SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
DATABASE_URL = "postgres://svc:db-password-91@127.0.0.1:5432/secrets"
FILE = {"provider": "local", "kind": "file", "config": {"path": "out/stolen.env"}}


def _static(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "kind": "static", "config": {"value": value}, "targets": [FILE]}


def _env_source(name: str, variable: str) -> dict[str, Any]:
    return {"name": name, "kind": "random_password", "source": {"kind": "env", "config": {"name": variable}},
            "targets": [FILE]}


def _stolen(project: Project) -> str:
    path = project.root / "out/stolen.env"
    return path.read_text() if path.exists() else ""


@pytest.fixture
def server_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the operator's server has in its environment, as the shipped deployments set it."""
    monkeypatch.setenv("SERVICE_API_KEY", KEY)
    monkeypatch.setenv("DATABASE_URL", DATABASE_URL)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.setenv("VAULT_TOKEN", "hvs.server-vault-token")


def _sync(client: APIClient) -> dict[str, Any]:
    body: dict[str, Any] = client.post("/sync", {}, format="json").json()
    return body


@pytest.mark.parametrize("variable", ["SERVICE_API_KEY", "SERVICE_CONFIG", "DJANGO_SETTINGS_MODULE",
                                      "DATABASE_URL", "AWS_SECRET_ACCESS_KEY", "VAULT_TOKEN"])
def test_a_static_value_naming_a_server_variable_writes_no_server_value(
    authed_api: APIClient, project: Project, server_environment: None, variable: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERVICE_CONFIG", str(project.definition))  # what ${SERVICE_CONFIG} leaked
    project.write(definition(_static("stolen", "${" + variable + "}")))
    body = _sync(authed_api)
    written = _stolen(project)
    for value in (KEY, DATABASE_URL, AWS_SECRET, "hvs.server-vault-token", str(project.definition),
                  "project.settings"):
        assert value not in written and value not in str(body)


def test_a_static_value_naming_a_server_variable_is_read_as_an_unset_one(
    authed_api: APIClient, project: Project, server_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No oracle: the answer for a variable the server holds is the answer for one it does not."""
    project.write(definition(_static("stolen", "${AWS_SECRET_ACCESS_KEY:-fallback-value}")))
    set_answer = _sync(authed_api)
    set_file = _stolen(project)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    project.lockfile.unlink(missing_ok=True)
    (project.root / "out/stolen.env").unlink(missing_ok=True)
    unset_answer = _sync(authed_api)
    assert set_file == _stolen(project) == "stolen=fallback-value\n"
    assert {k: v for k, v in set_answer.items() if k != "timestamp"} == \
        {k: v for k, v in unset_answer.items() if k != "timestamp"}


@pytest.mark.parametrize("variable", ["DATABASE_URL", "AWS_SECRET_ACCESS_KEY", "VAULT_TOKEN", "SERVICE_API_KEY"])
def test_an_env_source_naming_a_server_variable_fails_as_an_unset_one(
    authed_api: APIClient, project: Project, server_environment: None, variable: str
) -> None:
    project.write(definition(_env_source("stolen", variable)))
    body = _sync(authed_api)
    assert body["secrets_failed"] == ["stolen"]
    assert body["errors"][0]["message"] == f"source resolution failed: env source variable not set: {variable}"
    assert _stolen(project) == ""


def test_the_upper_case_override_takes_no_server_variable(
    authed_api: APIClient, project: Project, server_environment: None
) -> None:
    project.write(definition({"name": "aws_secret_access_key", "kind": "random_password", "targets": [FILE]}))
    body = _sync(authed_api)
    assert body["secrets_generated"] == ["aws_secret_access_key"]
    assert body.get("sources", {}) == {}
    assert _stolen(project) and AWS_SECRET not in _stolen(project)


def test_the_operators_allow_list_lets_a_definition_read_those_variables_only(
    authed_api: APIClient, project: Project, server_environment: None, monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    settings.SERVICE_DEFINITION_ENV = ("APP_*", "DEPLOY_REGION")
    monkeypatch.setenv("APP_DB_PASSWORD", "allowed-app-password")
    monkeypatch.setenv("DEPLOY_REGION", "eu-west-1")
    project.write(definition(
        _static("region", "${DEPLOY_REGION}"), _env_source("app_db_password", "APP_DB_PASSWORD"),
        _env_source("stolen", "AWS_SECRET_ACCESS_KEY"),
    ))
    body = _sync(authed_api)
    assert body["secrets_failed"] == ["stolen"]
    assert "region=eu-west-1" in _stolen(project)
    assert "app_db_password=allowed-app-password" in _stolen(project)


@pytest.mark.parametrize("variable", ["SERVICE_API_KEY", "DJANGO_SETTINGS_MODULE", "DATABASE_URL"])
def test_a_catch_all_pattern_never_reaches_the_services_own_settings(
    authed_api: APIClient, project: Project, server_environment: None, settings: Any, variable: str
) -> None:
    settings.SERVICE_DEFINITION_ENV = ("*",)
    project.write(definition(_static("stolen", "${" + variable + ":-not-readable}"),
                             _env_source("aws", "AWS_SECRET_ACCESS_KEY")))
    _sync(authed_api)
    assert "stolen=not-readable" in _stolen(project)
    assert f"aws={AWS_SECRET}" in _stolen(project)  # '*' is the operator's choice for the rest


def test_validate_tells_nothing_of_which_variables_the_server_has_set(
    authed_api: APIClient, server_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = {"version": "1.0", "secrets": [
        {"name": "probe", "kind": "random_password", "rotation_period": "${AWS_SECRET_ACCESS_KEY}"},
        {"name": "probe2", "kind": "random_password", "config": {"length": "${VAULT_TOKEN}"}},
    ]}

    def answer() -> dict[str, Any]:
        body: dict[str, Any] = authed_api.post("/config/validate", {"config": document}, format="json").json()
        return body

    held = answer()
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.delenv("VAULT_TOKEN")
    assert held == answer()


def test_render_names_no_server_variable_as_used(
    authed_api: APIClient, project: Project, server_environment: None
) -> None:
    project.write(definition(_static("stolen", "x"), variables={"k": "${AWS_SECRET_ACCESS_KEY}"}))
    body = authed_api.post("/config/render", {}, format="json").json()
    assert body["environment_used"] == []
    assert AWS_SECRET not in str(body)


def _command_sync(project: Project) -> str:
    out = StringIO()
    call_command("sync", "--definition", str(project.definition), "--json", stdout=out)
    return _stolen(project)


def test_the_command_line_reads_every_variable_as_secretzero_does(
    db: None, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_DEPLOY_HOST", "db.internal")
    monkeypatch.setenv("MY_SEED", "seed-from-my-shell")
    project.write(definition(_static("host", "${MY_DEPLOY_HOST}"), _env_source("seed", "MY_SEED"),
                             {"name": "my_token", "kind": "random_password", "targets": [FILE]}))
    monkeypatch.setenv("MY_TOKEN", "token-from-my-shell")
    written = _command_sync(project)
    assert "host=db.internal" in written and "seed=seed-from-my-shell" in written
    assert "my_token=token-from-my-shell" in written


def test_the_command_line_never_reads_the_services_own_settings(
    db: None, project: Project, server_environment: None
) -> None:
    project.write(definition(_static("stolen", "${SERVICE_API_KEY:-not-readable}")))
    assert _command_sync(project) == "stolen=not-readable\n"


def test_the_command_line_follows_the_allow_list_once_the_operator_sets_it(
    db: None, project: Project, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.SERVICE_DEFINITION_ENV = ()  # SERVICE_DEFINITION_ENV=-
    monkeypatch.setenv("MY_DEPLOY_HOST", "db.internal")
    project.write(definition(_static("host", "${MY_DEPLOY_HOST:-unset}")))
    assert _command_sync(project) == "host=unset\n"


def test_a_job_reads_the_environment_as_the_service_does(
    db: None, project: Project, server_environment: None
) -> None:
    """The worker builds its workspace with the service's rule, whoever submitted the job."""
    ws = workspaces.workspace()
    assert "AWS_SECRET_ACCESS_KEY" not in ws.environ  # type: ignore[operator]
    assert workspaces.workspace(command_line=True).environ["AWS_SECRET_ACCESS_KEY"] == AWS_SECRET  # type: ignore[index]


@pytest.mark.slow
def test_the_allow_list_setting_refuses_what_is_not_a_name_or_pattern(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "project.settings",
                               "SERVICE_DATA_DIR": str(tmp_path / "data"), "SERVICE_DEFINITION_ENV": "APP_*, $(id)"})
    assert done.returncode != 0
    assert "SERVICE_DEFINITION_ENV must list variable names or patterns" in done.stderr


@pytest.mark.slow
def test_a_real_server_and_job_worker_write_no_server_variable(
    tmp_path: Path, servers: Any
) -> None:
    """As the attacker ran it: ``manage.py serve`` and ``manage.py worker`` with the operator's
    variables; the definition pushed; POST /sync (run by the worker); the dotenv file read."""
    project = Project(tmp_path / "repo")
    project.root.mkdir()
    project.write(definition(_static("key", "${SERVICE_API_KEY}"), _static("db", "${DATABASE_URL:-none}"),
                             _env_source("aws", "AWS_SECRET_ACCESS_KEY"),
                             {"name": "vault_token", "kind": "random_password", "targets": [FILE]}))
    env = server_env(data_dir=tmp_path / "data", config=project.definition,
                     extra={"AWS_SECRET_ACCESS_KEY": AWS_SECRET, "VAULT_TOKEN": "hvs.server-vault-token",
                            "DATABASE_URL": f"sqlite:///{tmp_path / 'data' / 'db.sqlite3'}"})
    server: LiveServer = servers(env, tmp_path / "serve.log")
    status, body = server.finished("/sync", {})
    written = _stolen(project)
    assert status == 200, body
    assert "aws" in body["secrets_failed"]
    for value in (API_KEY, AWS_SECRET, "hvs.server-vault-token", "sqlite:///"):
        assert value not in written and value not in str(body)
    assert "db=none" in written
