"""Named API keys: who they name, expiry, revocation, rotation's grace, last used, no key stored."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apikeys import keys
from apikeys.models import ApiKey
from audit.models import AuditEntry
from tests.factories import LOCAL_HOST, named_key


def _get(key: str, path: str = "/audit/logs") -> Any:
    return APIClient().get(path, HTTP_X_API_KEY=key)


@pytest.fixture
def secured(db: None, api_key: str) -> None:
    """SERVICE_API_KEY set too, so a refused named key is never insecure mode."""


def test_a_named_key_is_accepted_and_audited_under_its_name(secured: None) -> None:
    assert _get(named_key("ci", "audit")).status_code == 200
    assert AuditEntry.objects.get(action="read_audit_logs").user == "ci"


def test_named_keys_alone_turn_insecure_mode_off(db: None, insecure: None) -> None:
    key = named_key("ci", "audit")
    assert APIClient().get("/audit/logs").status_code == 401
    assert _get(key).status_code == 200


def test_revoking_the_last_key_does_not_open_the_server(db: None, insecure: None) -> None:
    key = named_key("ci", "audit")
    keys.revoke("ci")
    assert _get(key).status_code == 401
    assert APIClient().get("/audit/logs").status_code == 401


def test_without_keys_or_rows_the_server_is_in_insecure_mode(db: None, insecure: None) -> None:
    APIClient(HTTP_HOST=LOCAL_HOST).get("/audit/logs")
    assert AuditEntry.objects.get(action="read_audit_logs").user is None


def test_a_revoked_key_is_refused_from_the_next_request_on(secured: None) -> None:
    key = named_key("ci", "audit")
    assert _get(key).status_code == 200
    keys.revoke("ci")
    response = _get(key)
    assert response.status_code == 401
    assert AuditEntry.objects.filter(action="authenticate", details__reason="invalid").count() == 1


def test_an_expired_key_is_refused(secured: None) -> None:
    key = named_key("ci", "audit", expires=timedelta(days=1))
    assert _get(key).status_code == 200
    ApiKey.objects.filter(name="ci").update(expires=timezone.now() - timedelta(seconds=1))
    assert _get(key).status_code == 401


def test_a_wrong_secret_for_an_existing_id_is_refused(secured: None) -> None:
    key = named_key("ci", "audit")
    forged = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    assert _get(forged).status_code == 401


def test_a_rotated_key_keeps_working_during_its_grace_period_only(secured: None) -> None:
    old = named_key("ci", "audit")
    new = keys.rotate("ci", timedelta(hours=24)).key
    assert new != old
    assert _get(old).status_code == 200
    assert _get(new).status_code == 200
    ApiKey.objects.filter(name="ci").update(previous_until=timezone.now() - timedelta(seconds=1))
    assert _get(old).status_code == 401
    assert _get(new).status_code == 200


def test_a_rotation_without_grace_refuses_the_old_key_at_once(secured: None) -> None:
    old = named_key("ci", "audit")
    keys.rotate("ci", timedelta(0))
    assert _get(old).status_code == 401


def test_revoking_a_rotated_key_refuses_the_old_key_too(secured: None) -> None:
    old = named_key("ci", "audit")
    new = keys.rotate("ci").key
    keys.revoke("ci")
    assert (_get(old).status_code, _get(new).status_code) == (401, 401)


def test_last_used_is_the_minute_and_written_at_most_once_a_minute(
    secured: None, django_assert_num_queries: Any
) -> None:
    key = named_key("ci", "audit")
    _get(key)
    used = ApiKey.objects.get(name="ci").last_used
    assert used is not None and used.second == 0 and used.microsecond == 0
    assert timezone.now() - used < timedelta(minutes=1)
    row = keys.resolve(key)
    assert row is not None
    with django_assert_num_queries(1):  # the lookup only: last_used is this minute already
        keys.resolve(key)


def test_the_key_is_nowhere_in_the_database_the_audit_or_the_logs(
    secured: None, caplog: pytest.LogCaptureFixture, django_db_blocker: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    key = named_key("ci", "audit")
    rotated = keys.rotate("ci").key
    for presented in (key, rotated, key + "x"):
        _get(presented)
        _get(presented, "/sync")
    secret_parts = [key.split("_", 2)[2], rotated.split("_", 2)[2]]
    dump = repr(list(ApiKey.objects.values())) + repr(list(AuditEntry.objects.values()))
    for secret in secret_parts:
        assert secret not in dump
        assert secret not in caplog.text
    assert keys.digest(secret_parts[1]) in dump  # only the hash is kept


def test_a_key_with_an_unknown_id_is_refused(secured: None) -> None:
    assert _get("sk_999999_" + "A" * 43).status_code == 401
