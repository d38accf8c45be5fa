"""Request bodies nested deeper than any definition (issue 25, point 7): a render body nested
500 levels parsed, then failed with a RecursionError 500 while it was pickled for the engine
process. Every JSON body is now refused at parse time past MAX_JSON_DEPTH levels: a 400 saying so."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi.api.parsers import MAX_JSON_DEPTH
from tests.factories import Project


def nested(levels: int) -> Any:
    """``levels`` JSON containers, one inside the other, under ``variables.x``."""
    value: Any = "leaf"
    for _ in range(levels - 2):
        value = [value]
    return {"variables": {"x": value}}


@pytest.fixture
def client(authed_api: APIClient, project: Project) -> APIClient:
    project.write("version: '1.0'\nsecrets: []\n")
    authed_api.raise_request_exception = False  # what a real client sees
    return authed_api


def test_a_render_body_nested_500_levels_is_a_400_naming_the_limit(client: APIClient) -> None:
    response = client.post("/config/render", json.dumps(nested(500)), content_type="application/json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert set(body) == {"error", "detail", "timestamp"}
    assert body["detail"] == f"The request body is nested more than {MAX_JSON_DEPTH} levels deep."
    refused = AuditEntry.objects.get(action="request_refused")
    assert refused.details["status"] == 400


@pytest.mark.parametrize("path", ["/sync", "/config/validate", "/drift/check", "/rotation/execute"])
def test_every_json_body_past_the_limit_is_a_400(client: APIClient, path: str) -> None:
    response = client.post(path, json.dumps(nested(MAX_JSON_DEPTH + 1)), content_type="application/json")
    assert response.status_code == 400, response.content
    assert "nested more than" in response.json()["detail"]


def test_a_body_at_the_limit_still_renders(client: APIClient) -> None:
    response = client.post("/config/render", json.dumps(nested(MAX_JSON_DEPTH)), content_type="application/json")
    assert response.status_code == 200, response.content
