"""GET /openapi.json generates the schema once and keeps it (anyone may ask, without a key), one
copy per insecure state, dropped when a setting changes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from apikeys import keys
from secretsapi.api.views import openapi


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times the schema was generated, from a cache emptied first."""
    openapi.forget()
    counted: list[int] = []
    real: Callable[..., Any] = SchemaGenerator.get_schema

    def counting(self: SchemaGenerator, *args: Any, **kwargs: Any) -> Any:
        counted.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counting)
    yield counted
    openapi.forget()


def security(client: APIClient) -> Any:
    answer = client.get("/openapi.json", HTTP_HOST="127.0.0.1", REMOTE_ADDR="127.0.0.1")
    assert answer.status_code == 200
    return answer.json()["paths"]["/audit/logs"]["get"]["security"]


def test_the_schema_is_generated_once_for_many_requests(api: APIClient, generated: list[int]) -> None:
    first = [security(api) for _ in range(3)]
    assert first == [first[0]] * 3
    assert len(generated) == 1


def test_a_server_leaving_insecure_mode_serves_the_keyed_schema_at_once(db: None, insecure: None,
                                                                         generated: list[int]) -> None:
    assert {} in security(APIClient())
    keys.create("ci", ["read"], actor="test")
    assert {} not in security(APIClient())


def test_a_changed_setting_drops_the_kept_schema(api: APIClient, generated: list[int], settings: Any) -> None:
    security(api)
    settings.SERVICE_ALLOW_SCRIPTS = not settings.SERVICE_ALLOW_SCRIPTS
    security(api)
    assert len(generated) == 2
