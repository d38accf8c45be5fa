"""What the fuzzer found (now fixed), pinned down without the fuzzer: a var_files name the
filesystem refuses was a 500, and the schema let `config` be any JSON value."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.asserts import assert_error_body
from tests.factories import Project, definition, file_secret


@pytest.mark.parametrize("path", ["/sync", "/agent/sync", "/config/render"])
def test_a_var_file_name_too_long_for_the_filesystem_is_a_4xx(
    authed_api: APIClient, project: Project, path: str
) -> None:
    project.write(definition(file_secret("db", "out/app.env")))
    response = authed_api.post(path, {"var_files": ["0" * 300]}, format="json")
    assert_error_body(response, response.status_code)
    assert 400 <= response.status_code < 500


def test_the_schema_says_config_validate_takes_an_object(api: APIClient) -> None:
    document = api.get("/openapi.json").json()
    request = document["components"]["schemas"]["ConfigValidateRequest"]
    assert request["properties"]["config"].get("type") == "object"
