"""Numbers no answer can carry (issue 18, point 11): NaN, infinities and integers past Python's
digit limit are definition errors naming their place, or a 400 in a request body: never a
generic 500, and never an answer that is not the JSON error body."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project

HUGE = "9" * 4301
DEFINITIONS = {
    "nan": "version: '1.0'\nvariables:\n  x: .nan\nsecrets: []\n",
    "inf": "version: '1.0'\nvariables:\n  x: -.inf\nsecrets: []\n",
    "float overflow": "version: '1.0'\nvariables:\n  x: 1.0e+999\nsecrets: []\n",
    "huge integer": f"version: '1.0'\nvariables:\n  x: {HUGE}\nsecrets: []\n",
    "huge hex integer": f"version: '1.0'\nvariables:\n  x: 0x{'f' * 4000}\nsecrets: []\n",
}


@pytest.fixture
def client(authed_api: APIClient) -> APIClient:
    authed_api.raise_request_exception = False  # what a real client sees
    return authed_api


def assert_error_body(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body: dict[str, Any] = response.json()
    assert set(body) == {"error", "detail", "timestamp"}
    return body


@pytest.mark.parametrize("text", DEFINITIONS.values(), ids=DEFINITIONS.keys())
@pytest.mark.parametrize("path", ["/config/render", "/sync", "/drift/check"])
def test_a_number_out_of_range_in_the_definition_is_a_definition_error_naming_its_place(
    client: APIClient, project: Project, text: str, path: str
) -> None:
    project.write(text)
    body = assert_error_body(client.post(path, {}, format="json"), 422)
    assert body["detail"].startswith("Secretfile.yml at line 3, column 6: ")
    assert "is not supported" in body["detail"]


def test_a_number_out_of_range_in_a_var_file_is_a_400_naming_the_file(
    client: APIClient, project: Project
) -> None:
    project.write("version: '1.0'\nsecrets: []\n").declare("vars.yml")
    (project.root / "vars.yml").write_text("x: .nan\n")
    body = assert_error_body(client.post("/config/render", {"var_files": ["vars.yml"]}, format="json"), 400)
    assert body["detail"].startswith("variable file 'vars.yml' at line 1, column 4: ")


@pytest.mark.parametrize("number", ["1e999", "-1e999", HUGE])
@pytest.mark.parametrize("path", ["/config/render", "/config/validate"])
def test_a_number_out_of_range_in_a_request_body_is_a_400_saying_so(
    client: APIClient, project: Project, number: str, path: str
) -> None:
    project.write("version: '1.0'\nsecrets: []\n")
    field = "variables" if path == "/config/render" else "config"
    response = client.post(path, f'{{"{field}": {{"x": {number}}}}}', content_type="application/json")
    body = assert_error_body(response, 400)
    assert "send it as a string" in body["detail"]


def test_numbers_in_range_still_render(client: APIClient, project: Project) -> None:
    project.write("version: '1.0'\nvariables:\n  a: 1.5\n  b: " + "9" * 4300 + "\n  c: 0x1f\nsecrets: []\n")
    response = client.post("/config/render", {}, format="json")
    assert response.status_code == 200
    assert response.json()["config"]["variables"] == {"a": 1.5, "b": int("9" * 4300), "c": 31}


@pytest.mark.parametrize("value", ['!!binary "/w=="', "!!set {a, b}", "!!timestamp 2020-01-01"])
def test_a_value_sync_refuses_is_a_definition_error_in_render_too(
    client: APIClient, project: Project, value: str
) -> None:
    # Binary that is not UTF-8 broke render's JSON answer (a generic 500); sync names the place.
    project.write(f"version: '1.0'\nmetadata:\n  x: {value}\nsecrets: []\n")
    for path in ("/config/render", "/sync"):
        body = assert_error_body(client.post(path, {}, format="json"), 422)
        assert body["detail"].startswith("metadata.x: unsupported value of type "), path
