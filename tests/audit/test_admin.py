"""The Django admin lists audit rows read-only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from audit.models import AuditEntry
from audit.recorder import record


@pytest.fixture
def admin_client(db: None) -> Client:
    User.objects.create_superuser("root", "root@example.com", "pw-for-tests")
    client = Client()
    client.login(username="root", password="pw-for-tests")
    return client


@pytest.fixture
def entry(db: None) -> AuditEntry:
    return AuditEntry.objects.get(pk=record(action="sync", resource="secrets", user="api-key", success=True,
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
