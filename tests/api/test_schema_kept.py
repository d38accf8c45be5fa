"""GET /openapi.json generates the schema once and keeps it (anyone may ask, without a key), one
copy per insecure state, dropped when a setting changes (but for a few that no schema shows)."""

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


def metrics_security(client: APIClient) -> Any:
    paths = client.get("/openapi.json", HTTP_HOST="127.0.0.1", REMOTE_ADDR="127.0.0.1").json()["paths"]
    return paths["/metrics"]["get"].get("security")


def test_a_changed_setting_drops_the_kept_schema(api: APIClient, generated: list[int], settings: Any) -> None:
    settings.SERVICE_METRICS_PUBLIC = False
    keyed = metrics_security(api)
    settings.SERVICE_METRICS_PUBLIC = True
    assert metrics_security(api) != keyed
    assert len(generated) == 2


@pytest.mark.parametrize("name", sorted(openapi.NOT_IN_THE_SCHEMA))
def test_the_kept_schema_outlives_a_setting_no_schema_shows(name: str, api: APIClient, generated: list[int],
                                                             settings: Any) -> None:
    security(api)
    setattr(settings, name, getattr(settings, name))  # a change, as the tests make at every test
    security(api)
    assert len(generated) == 1


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The media types the schema was rendered to, from a cache emptied first."""
    from drf_spectacular.renderers import OpenApiJsonRenderer

    openapi.forget()
    rendered: list[str] = []
    real: Callable[..., Any] = OpenApiJsonRenderer.render

    def counting(self: OpenApiJsonRenderer, data: Any, media_type: str | None = None, *args: Any) -> Any:
        rendered.append(str(media_type))
        return real(self, data, media_type, *args)

    monkeypatch.setattr(OpenApiJsonRenderer, "render", counting)
    yield rendered
    openapi.forget()


def test_the_schema_is_rendered_once_per_media_type(api: APIClient, renders: list[str]) -> None:
    for _ in range(3):
        for accept in ("application/json", "application/vnd.oai.openapi+json"):
            assert api.get("/openapi.json", HTTP_ACCEPT=accept)["Content-Type"] == accept
    assert sorted(renders) == ["application/json", "application/vnd.oai.openapi+json"]


def test_the_kept_bytes_answer_as_the_first_rendering(api: APIClient, renders: list[str]) -> None:
    first, kept = (api.get("/openapi.json") for _ in range(2))
    assert len(renders) == 1
    assert kept.content == first.content and len(kept.content) > 100_000
    headers = ("Content-Type", "Content-Disposition", "Vary", "Allow")
    assert [kept[name] for name in headers] == [first[name] for name in headers]
    assert kept.json()["openapi"].startswith("3.")


def test_an_accept_with_parameters_is_rendered_each_time_and_never_kept(api: APIClient, renders: list[str]) -> None:
    for indent in ("2", "3", "2"):
        answer = api.get("/openapi.json", HTTP_ACCEPT=f"application/json; indent={indent}")
        assert answer.status_code == 200
        assert answer.content.startswith(b"{\n" + b" " * int(indent) + b'"')
    assert len(renders) == 3
    assert openapi._rendered == {}
