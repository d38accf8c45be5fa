"""GET /secrets/{name}: off by default, audited, never cached, checked against the lockfile."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import LOCAL_HOST, Project, definition, env_secret, environments, file_secret


@pytest.fixture
def synced(authed_api: APIClient, project: Project) -> Project:
    project.write(definition(file_secret("db", "out/app.json", kind="random_hex")))
    authed_api.post("/sync", {}, format="json")
    return project


@pytest.fixture
def enabled(settings: Any) -> None:
    settings.SERVICE_ALLOW_VALUE_READ = True


def stored(project: Project) -> str:
    return str(json.loads((project.root / "out/app.json").read_text())["db"])


def test_value_read_is_403_by_default(authed_api: APIClient, synced: Project) -> None:
    response = authed_api.get("/secrets/db")
    assert response.status_code == 403
    assert set(response.json()) == {"error", "detail", "timestamp"}
    assert stored(synced) not in response.content.decode()


def test_value_read_is_refused_in_insecure_mode_even_when_enabled(
    synced: Project, enabled: None, settings: Any
) -> None:
    settings.SERVICE_API_KEY = None
    assert Client(HTTP_HOST=LOCAL_HOST).get("/secrets/db").status_code == 403


def test_only_the_exact_word_true_enables_value_read(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    import project.settings as module
    from project.environment import env_true_only

    for raw, expected in (("TRUE", True), ("true", True), ("false", False), ("", False)):
        monkeypatch.setenv("SERVICE_ALLOW_VALUE_READ", raw)
        assert importlib.reload(module).SERVICE_ALLOW_VALUE_READ is expected, raw
    # Other spellings of true stop the service at start (tests/test_settings.py).
    for raw in ("1", "yes", "on"):
        monkeypatch.setenv("SERVICE_ALLOW_VALUE_READ", raw)
        with pytest.raises(ImproperlyConfigured, match="SERVICE_ALLOW_VALUE_READ must be true or false"):
            env_true_only("SERVICE_ALLOW_VALUE_READ")
    monkeypatch.delenv("SERVICE_ALLOW_VALUE_READ")
    importlib.reload(module)


def test_enabled_read_returns_definition_status_and_verified_value(
    authed_api: APIClient, synced: Project, enabled: None
) -> None:
    response = authed_api.get("/secrets/db")
    body = response.json()
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    assert body["value"] == stored(synced)
    assert body["verified"] is True
    assert body["sources"] == {"db": "local/file/out/app.json"}
    assert body["definition"]["kind"] == "random_hex"
    assert body["status"]["exists"] is True


def test_a_value_changed_behind_our_back_is_reported_not_hidden(
    authed_api: APIClient, synced: Project, enabled: None
) -> None:
    (synced.root / "out/app.json").write_text('{"db": "tampered"}')
    body = authed_api.get("/secrets/db").json()
    assert body["value"] == "tampered"
    assert body["verified"] is False
    assert "differs from the lockfile" in body["messages"][0]


def test_a_value_read_renders_the_definition_with_the_var_files_given(
    authed_api: APIClient, project: Project, enabled: None
) -> None:
    environments(project, env_secret("db", fmt="json"))
    authed_api.post("/sync", {"var_files": ["prod.yml"]}, format="json")
    assert authed_api.get("/secrets/db").json()["verified"] is False  # out/dev.json: never written
    body = authed_api.get("/secrets/db?var_files=prod.yml").json()
    assert (body["verified"], body["sources"]) == (True, {"db": "local/file/out/prod.json"})
    rows = AuditEntry.objects.filter(action="read_secret_value").order_by("id")
    assert [row.details["var_files"] for row in rows] == [[], ["prod.yml"]]


def test_a_value_read_with_a_missing_var_file_is_404(authed_api: APIClient, synced: Project, enabled: None) -> None:
    synced.declare("nope.yml")
    assert authed_api.get("/secrets/db?var_files=nope.yml").status_code == 404


def test_unknown_secret_is_404(authed_api: APIClient, synced: Project, enabled: None) -> None:
    assert authed_api.get("/secrets/ghost").status_code == 404


def test_every_read_is_audited_without_the_value(authed_api: APIClient, synced: Project, enabled: None) -> None:
    value = stored(synced)
    authed_api.get("/secrets/db")
    row = AuditEntry.objects.get(action="read_secret_value")
    assert row.resource == "secret:db" and row.success and row.user == "service"
    assert value not in json.dumps(row.details)
    assert hashlib.sha256(value.encode()).hexdigest() not in json.dumps(row.details)


def test_refused_reads_are_audited_as_failures(authed_api: APIClient, synced: Project) -> None:
    authed_api.get("/secrets/db")
    row = AuditEntry.objects.get(action="read_secret_value")
    assert row.success is False and row.details["error"] == "value_read_disabled"


def test_value_never_leaks_through_other_endpoints(authed_api: APIClient, synced: Project, enabled: None) -> None:
    value = stored(synced)
    for method, path in (("get", "/secrets"), ("get", "/secrets/db/status"), ("post", "/drift/check"),
                         ("post", "/policy/check"), ("post", "/config/render"), ("get", "/audit/logs")):
        response = getattr(authed_api, method)(path, {}, format="json") if method == "post" else authed_api.get(path)
        assert value not in response.content.decode(), path
