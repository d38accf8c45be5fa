"""Scopes, generated from the one table in apikeys/scopes.py: each endpoint for each scope."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from apikeys.scopes import ANY_KEY, OPERATION_SCOPED, README_BEGIN, README_END, SCOPES, scopes_table
from audit.models import AuditEntry
from secretsapi.api.permissions import endpoint_texts
from tests.documentation import documentation
from tests.factories import named_key

ROOT = Path(__file__).resolve().parents[2]
UNAUTHENTICATED = {"root", "health"}
CASES = [(scope, name) for scope, names in SCOPES.items() for name in names]


def _call(client: APIClient, url_name: str) -> Any:
    *methods, route = endpoint_texts()[url_name].split(" ")
    method = methods[0]  # each method of a path needs the same scope
    path = re.sub(r"\{[^}]+\}", "nosuch", route)
    return client.generic(method, path, "{}" if method == "POST" else "", content_type="application/json")


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    return client


def test_every_authenticated_endpoint_is_in_exactly_one_scope() -> None:
    listed = [name for names in SCOPES.values() for name in names]
    assert sorted(listed) == sorted(set(endpoint_texts()) - UNAUTHENTICATED - OPERATION_SCOPED - ANY_KEY)


@pytest.mark.parametrize(("scope", "url_name"), CASES)
def test_a_key_with_the_scope_passes_the_scope_check(db: None, settings: Any, scope: str, url_name: str) -> None:
    settings.SERVICE_ALLOW_VALUE_READ = True
    response = _call(_client(named_key("k", scope)), url_name)
    assert response.status_code not in (401, 403), response.json()
    assert not AuditEntry.objects.filter(details__reason="permission_denied").exists()


@pytest.mark.parametrize(("scope", "url_name"), CASES)
def test_a_key_with_every_other_scope_is_refused_with_403_audited(db: None, scope: str, url_name: str) -> None:
    others = sorted(set(SCOPES) - {scope})
    response = _call(_client(named_key("k", *others)), url_name)
    assert response.status_code == 403
    assert set(response.json()) == {"error", "detail", "timestamp"}
    assert repr(scope) in response.json()["detail"]
    row = AuditEntry.objects.get(action="request_refused")
    assert (row.user, row.success) == ("k", False)
    assert (row.details["status"], row.details["reason"]) == (403, "permission_denied")


@pytest.mark.parametrize("url_name", sorted(name for _, name in CASES))
def test_the_service_key_has_every_scope(authed_api: APIClient, settings: Any, url_name: str) -> None:
    settings.SERVICE_ALLOW_VALUE_READ = True
    assert _call(authed_api, url_name).status_code not in (401, 403)


def test_the_readme_scopes_table_is_the_one_generated_from_the_code() -> None:
    readme = documentation()
    generated = scopes_table(endpoint_texts())
    assert f"{README_BEGIN}\n{generated}\n{README_END}" in readme
