"""Files a request may read are the var files the definition declares (issue 36, point 4).

As the attacker ran it: a key with the ``read`` scope posted ``/config/render`` with
``var_files`` naming YAML files of the definition's folder, and got back as variables a
kubeconfig's bearer token, every key of the file a ``source: file`` reads, and another team's
definition with its static values. A request now names only var files declared in
``environments.profiles.<name>.var_files``; even a declared one is never a file a provider or a
source reads, nor another definition. The command line, run by a person on their own files,
still takes any var file (SecretZero's ``--var-file``).
"""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.factories import Project, definition, file_secret, named_key

TOKEN = "eyJhbGciOiJSUzI1NiJ9.kube-bearer-token-4d1c"
OTHER_KEY = "other-input-value-8e2b"
TEAM_B_STATIC = "team-b-static-value-77aa"
DECLARED = "env: staging\n"


@pytest.fixture
def folder(project: Project) -> Project:
    """The folder as the attacker found it, beside the served definition."""
    (project.root / "kubeconfig.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "users": [{"name": "u", "user": {"token": TOKEN}}]}))
    (project.root / "seed.yml").write_text(f"DB_PASSWORD: seeded-value-3a9f\nOTHER_KEY: {OTHER_KEY}\n")
    (project.root / "team-b.yml").write_text(yaml.safe_dump(definition(
        {"name": "b_license", "kind": "static", "config": {"value": TEAM_B_STATIC},
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "b/out.env"}}]})))
    (project.root / "notes.yaml").write_text("anything: in-the-folder\n")
    (project.root / "staging.szvar").write_text(DECLARED)
    project.write(definition(
        file_secret("db", "out/{{ var.env }}.env"),
        {"name": "db_seed", "kind": "random_password", "targets": [],
         "source": {"kind": "file", "config": {"path": "seed.yml", "format": "yaml", "key": "DB_PASSWORD"}}},
        variables={"env": "dev"},
        providers={"k8s": {"kind": "kubernetes", "config": {"kubeconfig": "kubeconfig.yaml"}}},
        environments={"profiles": {"staging": {"var_files": ["staging.szvar"]}}},
    ))
    return project


@pytest.fixture
def reader(db: None, api_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=named_key("reader", "read"))
    return client


def _refused_as_undeclared(response: Any, var_file: str) -> None:
    assert response.status_code == 404, response.content
    detail = response.json()["detail"]
    assert f"variable file '{var_file}' is not declared by the definition" in detail
    assert "environments.profiles.<name>.var_files" in detail and "SERVICE_UNDECLARED_VAR_FILES" in detail
    for value in (TOKEN, OTHER_KEY, TEAM_B_STATIC, "in-the-folder"):
        assert value not in response.content.decode()


@pytest.mark.parametrize("var_file", ["kubeconfig.yaml", "seed.yml", "team-b.yml", "notes.yaml",
                                      "./notes.yaml", "sub/../notes.yaml"])
def test_render_refuses_a_yaml_file_of_the_folder_the_definition_does_not_declare(
    reader: APIClient, folder: Project, var_file: str
) -> None:
    _refused_as_undeclared(reader.post("/config/render", {"var_files": [var_file]}, format="json"), var_file)


REQUESTS = [
    ("get", "/secrets"), ("get", "/secrets/db/status"), ("get", "/secrets/db"),
    ("post", "/sync"), ("post", "/agent/sync"), ("post", "/drift/check"), ("post", "/rotation/check"),
    ("post", "/rotation/execute"), ("post", "/policy/check"), ("post", "/config/render"),
]


@pytest.mark.parametrize(("method", "path"), REQUESTS)
def test_every_endpoint_with_var_files_refuses_an_undeclared_one(
    authed_api: APIClient, folder: Project, method: str, path: str, settings: Any
) -> None:
    settings.SERVICE_ALLOW_VALUE_READ = True
    if method == "get":
        response = authed_api.get(f"{path}?var_files=seed.yml")
    else:
        response = authed_api.post(path, {"var_files": ["seed.yml"]}, format="json")
    _refused_as_undeclared(response, "seed.yml")
    assert not (folder.root / "out").exists()


def test_a_refusal_tells_nothing_of_what_the_folder_holds(reader: APIClient, folder: Project) -> None:
    def answer(var_file: str) -> dict[str, Any]:
        body: dict[str, Any] = reader.post("/config/render", {"var_files": [var_file]}, format="json").json()
        body.pop("timestamp")
        body["detail"] = body["detail"].replace(var_file, "X")
        return body

    assert answer("notes.yaml") == answer("absent.yaml") == answer("../../etc/passwd.yml")


def test_a_declared_var_file_still_works(reader: APIClient, authed_api: APIClient, folder: Project) -> None:
    body = reader.post("/config/render", {"var_files": ["staging.szvar"]}, format="json").json()
    assert body["config"]["secrets"][0]["targets"][0]["config"]["path"] == "out/staging.env"
    assert authed_api.post("/sync", {"var_files": ["staging.szvar"], "secret_name": "db"},
                           format="json").status_code == 200
    assert (folder.root / "out/staging.env").exists()


@pytest.mark.parametrize(("var_file", "reason"), [
    ("kubeconfig.yaml", "a file a provider or a source of the definition reads"),
    ("seed.yml", "a file a provider or a source of the definition reads"),
    ("team-b.yml", "is a definition (it declares secrets)"),
])
def test_a_declared_var_file_is_still_never_a_credential_an_input_or_another_definition(
    reader: APIClient, folder: Project, var_file: str, reason: str, settings: Any
) -> None:
    """The definition's author declares them: as untrusted as the request."""
    folder.declare(var_file)
    settings.SERVICE_VAR_FILES_FROM_OUTPUTS = True  # allows targets, never these
    response = reader.post("/config/render", {"var_files": [var_file]}, format="json")
    assert response.status_code == 400, response.content
    assert reason in response.json()["detail"]
    for value in (TOKEN, OTHER_KEY, TEAM_B_STATIC):
        assert value not in response.content.decode()


def test_a_lane_declaring_another_definition_is_refused_too(authed_api: APIClient, folder: Project) -> None:
    folder.declare("team-b.yml", lane="b")
    response = authed_api.post("/config/render", {"environment": "b"}, format="json")
    assert response.status_code == 400 and TEAM_B_STATIC not in response.content.decode()


def test_the_operator_may_let_requests_name_undeclared_var_files(
    reader: APIClient, folder: Project, settings: Any
) -> None:
    settings.SERVICE_UNDECLARED_VAR_FILES = True
    body = reader.post("/config/render", {"var_files": ["notes.yaml"]}, format="json").json()
    assert body["config"]["variables"]["anything"] == "in-the-folder"
    refused = reader.post("/config/render", {"var_files": ["kubeconfig.yaml"]}, format="json")
    assert refused.status_code == 400 and TOKEN not in refused.content.decode()


def test_the_command_line_takes_any_var_file_as_secretzero_does(db: None, folder: Project) -> None:
    (folder.root / "mine.yml").write_text("env: mine\n")
    call_command("sync", "--definition", str(folder.definition), "--var-file", "mine.yml", "--secret", "db",
                 stdout=StringIO())
    assert (folder.root / "out/mine.env").exists()
