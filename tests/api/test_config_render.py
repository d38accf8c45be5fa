"""POST /config/render: variables applied, statics and environment values redacted."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret


@pytest.fixture
def rendered_project(project: Project) -> Project:
    static = {"name": "license", "kind": "static", "config": {"value": "hand-written-secret"},
              "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/{{ var.env }}.env"}}]}
    return project.write(definition(
        file_secret("db", "out/{{ var.env }}/{{ var.region }}.env"),
        static,
        variables={"env": "dev", "region": "eu", "unused": 1},
    ))


def render(api: APIClient, **body: object):  # type: ignore[no-untyped-def]
    return api.post("/config/render", body, format="json")


def test_render_applies_variables_and_lists_those_used(authed_api: APIClient, rendered_project: Project) -> None:
    body = render(authed_api).json()
    assert body["config"]["secrets"][0]["targets"][0]["config"]["path"] == "out/dev/eu.env"
    assert body["variables_used"] == ["env", "region"]
    assert body["config"]["variables"]["unused"] == 1


def test_request_variables_win_over_var_files_and_definition(authed_api: APIClient, rendered_project: Project) -> None:
    (rendered_project.root / "prod.yml").write_text("env: prod\nregion: us\n")
    rendered_project.declare("prod.yml")
    body = render(authed_api, var_files=["prod.yml"], variables={"region": "ap"}).json()
    assert body["config"]["secrets"][0]["targets"][0]["config"]["path"] == "out/prod/ap.env"
    assert body["var_files"] == ["prod.yml"]


def test_static_values_are_redacted(authed_api: APIClient, rendered_project: Project) -> None:
    response = render(authed_api)
    assert response.json()["config"]["secrets"][1]["config"]["value"] == "***"
    assert b"hand-written-secret" not in response.content


def test_environment_values_are_redacted_wherever_they_flow(
    authed_api: APIClient, project: Project, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.SERVICE_DEFINITION_ENV = ("DB_HOST_*",)  # the operator lets definitions read it
    monkeypatch.setenv("DB_HOST_FOR_TEST", "internal.db.example")
    project.write(definition(file_secret("db", "out/${DB_HOST_FOR_TEST}.env"),
                             variables={"host": "${DB_HOST_FOR_TEST}"}, metadata={"owner": "{{ var.host }}"}))
    response = render(authed_api)
    body = response.json()
    assert b"internal.db.example" not in response.content
    assert body["config"]["variables"]["host"] == "***"
    assert body["config"]["metadata"]["owner"] == "***"
    assert body["environment_used"] == ["DB_HOST_FOR_TEST"]


def test_an_undefined_variable_is_rendered_as_written_as_secretzero_does(
    authed_api: APIClient, project: Project
) -> None:
    project.write(definition(file_secret("db", "out/{{ var.nope }}.env")))
    response = render(authed_api)
    assert response.status_code == 200
    assert response.json()["config"]["secrets"][0]["targets"][0]["config"]["path"] == "out/{{ var.nope }}.env"


@pytest.mark.usefixtures("undeclared_var_files")
def test_var_file_escaping_the_folder_is_400(authed_api: APIClient, rendered_project: Project) -> None:
    response = render(authed_api, var_files=["/etc/hostname"])
    assert response.status_code == 400
    assert set(response.json()) == {"error", "detail", "timestamp"}


@pytest.mark.usefixtures("undeclared_var_files")
def test_var_file_that_is_not_a_mapping_is_400(authed_api: APIClient, rendered_project: Project) -> None:
    (rendered_project.root / "list.yml").write_text("- a\n- b\n")
    assert render(authed_api, var_files=["list.yml"]).status_code == 400


def test_missing_var_file_is_404(authed_api: APIClient, rendered_project: Project) -> None:
    rendered_project.declare("absent.yml")
    assert render(authed_api, var_files=["absent.yml"]).status_code == 404


def test_variables_must_be_an_object(authed_api: APIClient, rendered_project: Project) -> None:
    assert render(authed_api, variables=["x"]).status_code == 422


def test_render_needs_the_key(api: APIClient, rendered_project: Project) -> None:
    assert render(api).status_code == 401


def test_render_is_audited_without_values(authed_api: APIClient, rendered_project: Project) -> None:
    render(authed_api, variables={"region": "ap"})
    row = AuditEntry.objects.get(action="render_config")
    assert row.resource == "config" and row.success
    assert row.details["variables"] == ["region"]
    assert "hand-written-secret" not in str(row.details)


def test_a_variable_used_only_in_a_static_value_is_listed_though_the_value_is_redacted(
    authed_api: APIClient, project: Project
) -> None:
    static = {"name": "license", "kind": "static", "config": {"value": "key-{{ var.tenant }}"}, "targets": []}
    project.write(definition(static, variables={"tenant": "acme"}))
    body = render(authed_api).json()
    assert body["config"]["secrets"][0]["config"]["value"] == "***"
    assert body["variables_used"] == ["tenant"]
