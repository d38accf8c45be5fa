"""GET /whoami: the key's name, scopes and projects, for any valid key; the error body without one."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import LOCAL_HOST, named_key

pytestmark = pytest.mark.django_db


def _with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    return client


def test_a_named_key_learns_its_name_scopes_and_every_project(api: APIClient) -> None:
    answer = _with(named_key("ci-deploy", "read", "write")).get("/whoami")
    assert (answer.status_code, answer.json()) == (
        200, {"name": "ci-deploy", "scopes": ["read", "write"], "projects": None, "insecure": False})


def test_a_key_with_no_scope_of_the_api_still_reaches_it(api: APIClient) -> None:
    answer = _with(named_key("scraper", "metrics")).get("/whoami")
    assert (answer.status_code, answer.json()["scopes"]) == (200, ["metrics"])


def test_the_service_key_is_named_service_with_every_scope(authed_api: APIClient) -> None:
    body = authed_api.get("/whoami").json()
    assert (body["name"], "admin" in body["scopes"], "write" in body["scopes"]) == ("service", True, True)


def test_without_a_key_it_is_401_with_the_error_body(api: APIClient) -> None:
    answer = api.get("/whoami")
    assert answer.status_code == 401
    assert set(answer.json()) == {"error", "detail", "timestamp"} and answer["WWW-Authenticate"]


def test_a_wrong_key_is_401(api: APIClient) -> None:
    assert _with("not-the-key").get("/whoami").status_code == 401


def test_insecure_mode_says_so(db: None, insecure: None) -> None:
    body = APIClient(HTTP_HOST=LOCAL_HOST).get("/whoami").json()
    assert (body["insecure"], body["name"], body["projects"]) == (True, None, None)


def test_each_call_is_audited_under_the_keys_name(api: APIClient) -> None:
    _with(named_key("ci-deploy", "read")).get("/whoami")
    row = AuditEntry.objects.filter(action="whoami").get()
    assert (row.user, row.success, row.resource) == ("ci-deploy", True, "whoami")


def test_a_query_parameter_is_refused(authed_api: APIClient) -> None:
    assert authed_api.get("/whoami?name=x").status_code == 422
