"""Answers that show a definition or a value are never cached (issue 18, point 11), errors included."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, file_secret


@pytest.mark.parametrize(("path", "body"), [
    ("/config/render", {}),
    ("/config/render", {"var_files": ["missing.yml"]}),
    ("/config/validate", {"config": definition(file_secret("db"))}),
    ("/config/validate", {"config": "not an object"}),
])
def test_render_and_validate_answers_carry_no_store(
    authed_api: APIClient, project: Project, path: str, body: object
) -> None:
    project.write(definition(file_secret("db")))
    assert authed_api.post(path, body, format="json")["Cache-Control"] == "no-store"


def test_other_answers_keep_no_cache_header(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    assert not authed_api.get("/secrets").has_header("Cache-Control")
