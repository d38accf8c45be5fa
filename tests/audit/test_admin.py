"""The Django admin lists audit rows read-only, with filters that stay short; admin logins are rows."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from apikeys import keys
from apikeys.models import ApiKey
from audit.models import AuditEntry
from audit.recorder import record
from secretsapi.admin.audit import ACTIONS
from tests.factories import LOCAL_HOST


@pytest.fixture
def admin_client(db: None) -> Client:
    # force_login: the login throttle (django-axes) needs the request that Client.login does not pass.
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-for-tests"))
    return client


@pytest.fixture
def entry(db: None) -> AuditEntry:
    return AuditEntry.objects.get(pk=record(action="sync", resource="secrets", user="service", success=True,
                                            details={"n": 1}))


def test_superuser_lists_audit_rows(admin_client: Client, entry: AuditEntry) -> None:
    response = admin_client.get("/admin/audit/auditentry/")
    assert response.status_code == 200
    assert b"sync" in response.content


def test_superuser_filters_by_action_resource_and_success(admin_client: Client, entry: AuditEntry) -> None:
    record(action="check_drift", resource="config", user=None, success=False)
    response = admin_client.get("/admin/audit/auditentry/?action=check_drift&resource=config&success__exact=0")
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1


def test_search_box_finds_rows(admin_client: Client, entry: AuditEntry) -> None:
    response = admin_client.get("/admin/audit/auditentry/?q=secrets")
    assert response.context["cl"].result_count == 1


def test_add_is_refused(admin_client: Client) -> None:
    assert admin_client.get("/admin/audit/auditentry/add/").status_code == 403


def test_change_is_refused(admin_client: Client, entry: AuditEntry) -> None:
    response = admin_client.post(f"/admin/audit/auditentry/{entry.pk}/change/", {"action": "tampered"})
    assert response.status_code == 403
    entry.refresh_from_db()
    assert entry.action == "sync"


def test_delete_is_refused(admin_client: Client, entry: AuditEntry) -> None:
    response = admin_client.post(f"/admin/audit/auditentry/{entry.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


def listed(client: Client, query: str) -> list[AuditEntry]:
    response = client.get(f"/admin/audit/auditentry/?{query}")
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


def test_success_filter_keeps_failed_rows(admin_client: Client, entry: AuditEntry) -> None:
    record(action="check_drift", resource="config", user=None, success=False)
    assert [r.action for r in listed(admin_client, "success__exact=0")] == ["check_drift"]


def test_action_filter_offers_the_known_actions_without_asking_the_table(
    admin_client: Client, entry: AuditEntry
) -> None:
    response = admin_client.get("/admin/audit/auditentry/")
    (spec,) = [s for s in response.context["cl"].filter_specs if s.title == "action"]
    assert [value for value, _ in spec.lookup_choices] == list(ACTIONS)


def test_every_action_the_service_writes_is_in_the_admins_list() -> None:
    root = Path(__file__).resolve().parents[2]
    modules = [*sorted((root / "secretsapi/actions").glob("*.py")), root / "secretsapi/operations.py"]
    source = "".join(path.read_text() for path in modules)
    assert set(re.findall(r'audited\(\s*"([a-z_]+)"', source)) <= set(ACTIONS)


def test_user_filter_stays_short_however_many_users_there_are(admin_client: Client, entry: AuditEntry) -> None:
    for i in range(60):
        record(action="admin_login", resource="admin", user=f"guess{i}", success=False)
    response = admin_client.get("/admin/audit/auditentry/")
    (spec,) = [s for s in response.context["cl"].filter_specs if s.title == "user"]
    assert len(spec.lookup_choices) == 4  # no key rows: the kinds only


def test_user_filter_by_kind(admin_client: Client, entry: AuditEntry) -> None:
    record(action="sync", resource="secrets", user="cli:alice", success=True)
    record(action="sync", resource="secrets", user=None, success=True)
    assert [r.user for r in listed(admin_client, "by=cli")] == ["cli:alice"]
    assert [r.user for r in listed(admin_client, "by=nobody")] == [None]


def test_one_user_is_found_by_its_exact_name(admin_client: Client, entry: AuditEntry) -> None:
    record(action="sync", resource="secrets", user="cli:alice", success=True)
    assert [r.user for r in listed(admin_client, "user=cli:alice")] == ["cli:alice"]


def test_date_filter_keeps_rows_of_the_period(admin_client: Client, entry: AuditEntry) -> None:
    old = record(action="sync", resource="secrets", user="service", success=True)
    AuditEntry.objects.filter(pk=old).update(timestamp=timezone.now() - timedelta(days=30))
    response = admin_client.get("/admin/audit/auditentry/")
    (spec,) = [s for s in response.context["cl"].filter_specs if s.title == "timestamp"]
    (today,) = [c["query_string"] for c in spec.choices(response.context["cl"]) if c["display"] == "Today"]
    assert [r.pk for r in listed(admin_client, today.lstrip("?") + "&action=sync")] == [entry.pk]


# -- admin logins are audited ---------------------------------------------------------------

def login(username: str, password: str) -> int:
    form = {"username": username, "password": password}
    return Client(HTTP_HOST=LOCAL_HOST).post("/admin/login/?next=/admin/", form).status_code


def test_a_successful_admin_login_writes_a_row_naming_the_user(db: None) -> None:
    User.objects.create_superuser("root", "root@example.com", "pw-for-tests")
    assert login("root", "pw-for-tests") == 302
    row = AuditEntry.objects.get(action="admin_login")
    assert (row.user, row.success, row.resource) == ("admin:root", True, "admin")


def test_a_failed_admin_login_writes_a_failed_row_naming_the_username_tried(db: None) -> None:
    User.objects.create_superuser("root", "root@example.com", "pw-for-tests")
    assert login("root", "wrong-password-123") == 200
    assert login("nobody-here", "another-guess-456") == 200
    rows = AuditEntry.objects.filter(action="admin_login").order_by("id")
    assert [(r.user, r.success) for r in rows] == [("admin:root", False), ("admin:nobody-here", False)]
    assert all(r.details["reason"] == "invalid_credentials" for r in rows)
    assert not any("guess" in str(r.details) or "wrong-password" in str(r.details) for r in rows)


def test_user_filter_offers_each_named_key_and_filters_by_it(admin_client: Client, entry: AuditEntry) -> None:
    keys.create("ci", ["read"])
    record(action="sync", resource="secrets", user="ci", success=True)
    response = admin_client.get("/admin/audit/auditentry/")
    (spec,) = [s for s in response.context["cl"].filter_specs if s.title == "user"]
    assert ("key:ci", "API key ci") in spec.lookup_choices
    assert [r.user for r in listed(admin_client, "by=key:ci")] == ["ci"]
    assert [r.user for r in listed(admin_client, "by=service")] == ["service"]


def test_api_keys_are_listed_read_only_without_their_hash(admin_client: Client) -> None:
    keys.create("ci", ["read"])
    response = admin_client.get("/admin/apikeys/apikey/")
    assert response.status_code == 200
    assert b"ci" in response.content
    assert ApiKey.objects.get().secret_hash.encode() not in response.content


def test_the_admin_revokes_keys_with_its_action(admin_client: Client) -> None:
    key = keys.create("ci", ["read"]).key
    row = ApiKey.objects.get()
    response = admin_client.post("/admin/apikeys/apikey/", {"action": "revoke", "_selected_action": [row.pk]})
    assert response.status_code == 302
    assert ApiKey.objects.get().revoked is not None
    assert keys.resolve(key) is None
    row_user = AuditEntry.objects.filter(action="apikey_revoke").values_list("user", flat=True).get()
    assert row_user == "admin:root"


def test_a_tally_lists_its_attempts(admin_client: Client, api_key: str) -> None:
    for _ in range(3):
        Client().get("/secrets", HTTP_X_API_KEY="wrong")
    response = admin_client.get("/admin/audit/auditentry/?action=authenticate")
    rows = response.context["cl"].result_list
    # One row per minute: the three attempts may straddle a minute's end.
    assert 1 <= len(rows) <= 2
    assert sum(response.context["cl"].model_admin.attempts(row) for row in rows) == 3
