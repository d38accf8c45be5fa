"""A lockfile nested far deeper than the JSON decoder recurses: the engine's ``lockfile_unreadable``
(its 500 naming the file's problem) for every operation that reads it, never the generic 500 of an
unexpected error, and the file is left as it was."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from secretsapi.api.errors import GENERIC_500
from tests.factories import Project, definition, file_secret

DEPTH = 200_000
NESTED = '{"version": "1.0", "secrets": {"db": ' + "[" * DEPTH + "]" * DEPTH + "}}"


@pytest.mark.parametrize(("method", "path", "body"), [
    ("get", "/secrets/db/status", None),
    ("post", "/drift/check", {}),
    ("post", "/sync", {"force": True}),
])
def test_a_lockfile_nested_200000_levels_is_lockfile_unreadable(
    authed_api: APIClient, project: Project, method: str, path: str, body: object
) -> None:
    project.write(definition(file_secret("db", "out/app.env")))
    project.lockfile.write_text(NESTED)

    response = getattr(authed_api, method)(path, data=body, format="json")

    answer: dict[str, str] = json.loads(response.content)
    assert response.status_code == 500 and answer["detail"] != GENERIC_500, answer
    assert answer["detail"].endswith(".gitsecrets.lock: nested too deeply to be read")
    assert project.lockfile.read_text() == NESTED
