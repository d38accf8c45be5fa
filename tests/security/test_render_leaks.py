"""Values through render (issue 18, point 1): a var file may not be a file holding generated values
or the service's state, provider credentials are redacted as /providers redacts them, and any
string equal to a recorded value is withheld from render and validate answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.asserts import assert_not_shown
from tests.factories import LOCAL_HOST, Project, definition, file_secret


@pytest.fixture(autouse=True)
def undeclared_var_files(settings: Any) -> None:
    """What a var file may never be, even where a request may name var files the definition does
    not declare (SERVICE_UNDECLARED_VAR_FILES; tests/security/test_var_file_reads.py has the default)."""
    settings.SERVICE_UNDECLARED_VAR_FILES = True


@pytest.fixture
def synced(authed_api: APIClient, project: Project) -> str:
    """A JSON target and a YAML target in the definition's folder, synced; returns a value."""
    project.write(definition(file_secret("db", "out/app.json", fmt="json"),
                             file_secret("api", "out/app.yml", fmt="yaml")))
    assert authed_api.post("/sync", {}, format="json").json()["secrets_generated"] == ["db", "api"]
    return str(json.loads((project.root / "out/app.json").read_text())["db"])


def render(api: APIClient, **body: Any):  # type: ignore[no-untyped-def]
    return api.post("/config/render", body, format="json")


def assert_refused(response: Any, var_file: str, value: str | None = None) -> None:
    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert f"variable file '{var_file}'" in detail
    assert "may not be a target of the definition" in detail
    if value is not None:
        assert_not_shown(response, value)


@pytest.mark.parametrize("target", ["out/app.json", "out/app.yml"])
def test_a_target_file_is_refused_as_a_var_file(authed_api: APIClient, synced: str, target: str) -> None:
    assert_refused(render(authed_api, var_files=[target]), target, synced)


def test_a_target_file_is_refused_without_a_key_in_insecure_mode(
    authed_api: APIClient, synced: str, settings: Any
) -> None:
    settings.SERVICE_API_KEY = None
    assert_refused(render(APIClient(HTTP_HOST=LOCAL_HOST), var_files=["out/app.json"]), "out/app.json", synced)


def test_a_symlink_to_a_target_file_is_refused(authed_api: APIClient, synced: str, project: Project) -> None:
    (project.root / "vars.yml").symlink_to(project.root / "out/app.json")
    assert_refused(render(authed_api, var_files=["vars.yml"]), "vars.yml", synced)


def test_a_target_reached_through_a_symlinked_folder_is_refused(
    authed_api: APIClient, synced: str, project: Project
) -> None:
    (project.root / "link").symlink_to(project.root / "out")
    assert_refused(render(authed_api, var_files=["link/app.json"]), "link/app.json", synced)


def test_a_target_that_other_var_files_moved_away_is_still_refused(
    authed_api: APIClient, project: Project
) -> None:
    # Synced to out/dev.json; prod.yml moves the target to out/prod.json, so only the lockfile
    # still says that out/dev.json holds a value.
    project.write(definition(file_secret("db", "out/{{ var.env }}.json", fmt="json"), variables={"env": "dev"}))
    authed_api.post("/sync", {}, format="json")
    value = json.loads((project.root / "out/dev.json").read_text())["db"]
    (project.root / "prod.yml").write_text("env: prod\n")
    response = render(authed_api, var_files=["prod.yml", "out/dev.json"])
    assert_refused(response, "out/dev.json", value)


def test_a_file_that_becomes_a_target_under_the_var_files_is_refused(
    authed_api: APIClient, project: Project
) -> None:
    project.write(definition(file_secret("db", "out/{{ var.env }}.json", fmt="json"), variables={"env": "dev"}))
    (project.root / "out").mkdir()
    (project.root / "out/prod.json").write_text('{"env": "prod"}')
    assert_refused(render(authed_api, var_files=["out/prod.json"]), "out/prod.json")


@pytest.mark.parametrize("name", [".gitsecrets.lock", ".gitsecrets.lock.lck", ".gitsecrets.local.lock"])
def test_lockfiles_and_their_lock_files_are_refused(
    authed_api: APIClient, synced: str, project: Project, name: str
) -> None:
    path = project.root / name
    if not path.exists():
        path.write_text('{"version": "1.0", "secrets": {}}\n')
    assert_refused(render(authed_api, var_files=[name]), name)


def test_a_lock_stripe_file_is_refused(authed_api: APIClient, synced: str, project: Project) -> None:
    stripe = next((project.root / ".gitsecrets.lock.targets").iterdir())
    given = f".gitsecrets.lock.targets/{stripe.name}"
    assert_refused(render(authed_api, var_files=[given]), given)


def test_a_temp_file_of_a_target_is_refused(authed_api: APIClient, synced: str, project: Project) -> None:
    # What an interrupted atomic write leaves beside the target: the new value.
    temp = project.root / "out/.app.json.k2j_x9.tmp"
    temp.write_text((project.root / "out/app.json").read_text())
    assert_refused(render(authed_api, var_files=["out/.app.json.k2j_x9.tmp"]), "out/.app.json.k2j_x9.tmp", synced)


def test_the_definition_itself_is_refused(authed_api: APIClient, project: Project) -> None:
    static = {"name": "license", "kind": "static", "config": {"value": "hand-written-secret"},
              "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/l.env"}}]}
    project.write(definition(static))
    response = render(authed_api, var_files=["Secretfile.yml"])
    assert_refused(response, "Secretfile.yml", "hand-written-secret")


def test_the_service_data_folder_is_refused(authed_api: APIClient, project: Project, settings: Any) -> None:
    settings.DATA_DIR = project.root / "data"
    settings.DATA_DIR.mkdir()
    (settings.DATA_DIR / "notes.yml").write_text("a: b\n")
    project.write(definition(file_secret("db")))
    assert_refused(render(authed_api, var_files=["data/notes.yml"]), "data/notes.yml")


@pytest.mark.parametrize("operation", ["/sync", "/drift/check", "/rotation/check", "/policy/check"])
def test_every_operation_refuses_a_target_as_a_var_file(
    authed_api: APIClient, project: Project, operation: str
) -> None:
    # Sync would put the values into target paths, ids and messages.
    project.write(definition(file_secret("db", "out/app.json", fmt="json"), file_secret("x", "out/{{ var.db }}.env"),
                             variables={"db": "placeholder"}))
    authed_api.post("/sync", {"secret_name": "db"}, format="json")
    value = json.loads((project.root / "out/app.json").read_text())["db"]
    response = authed_api.post(operation, {"var_files": ["out/app.json"]}, format="json")
    assert_refused(response, "out/app.json", value)


@pytest.mark.parametrize("path", ["/secrets", "/secrets/db/status", "/secrets/db"])
def test_every_read_refuses_a_target_as_a_var_file(
    authed_api: APIClient, synced: str, path: str, settings: Any
) -> None:
    settings.SERVICE_ALLOW_VALUE_READ = True
    assert_refused(authed_api.get(path, {"var_files": "out/app.json"}), "out/app.json", synced)


def test_the_refusal_of_a_target_names_the_setting_that_allows_it(authed_api: APIClient, synced: str) -> None:
    detail = render(authed_api, var_files=["out/app.json"]).json()["detail"]
    assert "SERVICE_VAR_FILES_FROM_OUTPUTS=true allows targets" in detail


def test_with_the_setting_a_target_is_a_var_file_but_render_still_withholds_its_values(
    authed_api: APIClient, synced: str, settings: Any
) -> None:
    settings.SERVICE_VAR_FILES_FROM_OUTPUTS = True
    response = render(authed_api, var_files=["out/app.json"])
    assert response.status_code == 200
    assert response.json()["config"]["variables"] == {"db": "***"}
    assert_not_shown(response, synced)


def test_with_the_setting_a_lockfile_is_still_refused(authed_api: APIClient, synced: str, settings: Any) -> None:
    settings.SERVICE_VAR_FILES_FROM_OUTPUTS = True
    response = render(authed_api, var_files=[".gitsecrets.lock"])
    assert response.status_code == 400
    assert "SERVICE_VAR_FILES_FROM_OUTPUTS" not in response.json()["detail"]


def test_a_var_file_that_is_not_protected_still_works(authed_api: APIClient, synced: str, project: Project) -> None:
    (project.root / "prod.yml").write_text("env: prod\n")
    response = render(authed_api, var_files=["prod.yml"])
    assert response.status_code == 200
    assert response.json()["config"]["variables"] == {"env": "prod"}


def test_provider_credentials_are_redacted_as_providers_shows_them(
    authed_api: APIClient, project: Project
) -> None:
    project.write(definition(
        file_secret("db"),
        providers={
            "vault": {"kind": "vault", "config": {"address": "https://ops:hunter2pw@vault.example"},
                      "auth": {"kind": "token", "config": {"token": "s.VAULTTOKEN"}}},
            "aws": {"kind": "aws", "config": {"region": "eu-west-1"},
                    "auth": {"kind": "static", "config": {"access_key_id": "AKIAEXAMPLE",
                                                          "secret_access_key": "{{ var.aws_secret }}"}}},
        },
        variables={"aws_secret": "wJalrXUtnFEMIexample"},
    ))
    response = render(authed_api)
    assert response.status_code == 200
    for credential in (b"hunter2pw", b"s.VAULTTOKEN", b"AKIAEXAMPLE", b"wJalrXUtnFEMIexample"):
        assert credential not in response.content
    providers = response.json()["config"]["providers"]
    assert providers["vault"]["auth"] == {"kind": "token", "config": {"token": "***"}}
    assert providers["vault"]["config"]["address"] == "https://***@vault.example"
    assert providers["aws"]["config"] == {"region": "eu-west-1"}
    # The variable the credential came from is redacted too.
    assert response.json()["config"]["variables"]["aws_secret"] == "***"


def test_a_copy_of_a_value_in_an_ordinary_var_file_is_withheld(
    authed_api: APIClient, synced: str, project: Project
) -> None:
    (project.root / "backup.yml").write_text(f"copied: {json.dumps(synced)}\nregion: eu\n")
    response = render(authed_api, var_files=["backup.yml"])
    assert response.status_code == 200
    assert_not_shown(response, synced)
    assert response.json()["config"]["variables"] == {"copied": "***", "region": "eu"}


def test_a_value_in_a_local_lockfile_secret_is_withheld_too(
    authed_api: APIClient, project: Project
) -> None:
    project.write(definition(file_secret("db", "out/app.json", fmt="json", local=True)))
    authed_api.post("/sync", {}, format="json")
    assert (project.root / ".gitsecrets.local.lock").exists()
    value = json.loads((project.root / "out/app.json").read_text())["db"]
    (project.root / "backup.yml").write_text(f"copied: {json.dumps(value)}\n")
    response = render(authed_api, var_files=["backup.yml"])
    assert_not_shown(response, value)


def test_a_value_the_caller_sent_is_shown_back_so_render_confirms_no_guess(
    authed_api: APIClient, synced: str, project: Project
) -> None:
    response = render(authed_api, variables={"guess": synced, "other": "not-a-value"})
    assert response.json()["config"]["variables"] == {"guess": synced, "other": "not-a-value"}


@pytest.mark.parametrize("providers", [
    [{"kind": "vault", "auth": {"config": {"token": "s.LISTED"}}}],
    {"vault": "s.LISTED"},
])
def test_a_providers_block_of_another_shape_is_not_shown(
    authed_api: APIClient, project: Project, providers: Any
) -> None:
    project.write(definition(file_secret("db"), providers=providers))
    response = render(authed_api)
    assert response.status_code == 200
    assert b"s.LISTED" not in response.content


@pytest.mark.parametrize("field", ["secret_file", "vault_file"])
def test_a_file_a_provider_names_for_its_targets_is_refused_as_a_var_file(
        authed_api: APIClient, project: Project, field: str) -> None:
    """A git-crypt file holds its values in plain text in the work tree."""
    (project.root / "secrets").mkdir()
    (project.root / "secrets/app.yaml").write_text("APP_DB_PASSWORD: plain-in-the-work-tree\n")
    kind = "git_crypt" if field == "secret_file" else "ansible_vault"
    project.write(definition(file_secret("db", "out/app.env"),
                             providers={"repo": {"kind": kind, "config": {field: "secrets/app.yaml"}}}))
    assert_refused(render(authed_api, var_files=["secrets/app.yaml"]), "secrets/app.yaml",
                   "plain-in-the-work-tree")
