"""JSON that is valid but not valid UTF-8 text once decoded (lone surrogates) and deep nesting:
a 4xx or a 200 with the input escaped, never a 500."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, file_secret

ERROR_KEYS = {"error", "detail", "timestamp"}


@pytest.mark.parametrize(("path", "raw"), [
    ("/config/render", '{"variables": {"\\ud800": "x"}}'),
    ("/config/render", '{"variables": {"a": "\\udfff"}}'),
    ("/config/validate", '{"config": {"version": "1", "secrets": [{"name": "\\ud800", "kind": "uuid"}]}}'),
    ("/config/validate", '{"config": {"version": "\\udc80", "secrets": []}}'),
    ("/sync", '{"secret_name": "\\ud800"}'),
    ("/sync", '{"var_files": ["\\udc80"]}'),
    ("/drift/check", '{"secret_name": "a\\ud800b"}'),
    ("/config/validate", '{"config": ' + "[" * 500 + "]" * 500 + "}"),
])
def test_lone_surrogates_and_deep_nesting_never_make_a_500(
    authed_api: APIClient, project: Project, path: str, raw: str
) -> None:
    project.write(definition(file_secret("db", "out/app.env")))
    response = authed_api.post(path, data=raw, content_type="application/json")
    assert response.status_code < 500, response.content[:300]
    body = json.loads(response.content)  # the answer is JSON (ASCII-escaped)
    if response.status_code >= 400:
        assert set(body) == ERROR_KEYS


def test_a_body_nested_deeper_than_the_parser_can_recurse_is_400(authed_api: APIClient, project: Project) -> None:
    raw = '{"config": ' + "[" * 5000 + "]" * 5000 + "}"  # 10 kB: far below the body limit
    response = authed_api.post("/config/validate", data=raw, content_type="application/json")
    assert response.status_code == 400 and set(json.loads(response.content)) == ERROR_KEYS
