"""Admin account changes are audit rows: made by createsuperuser, added, changed, given a new
password or deleted in the admin; each names the account and who did it, never a password."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from audit import origin
from audit.models import AuditEntry
from secretsapi.management.base import cli_actor
from tests.factories import LOCAL_HOST

PASSWORD = "Correct-horse-battery-7"
NEW_PASSWORD = "Another-staple-battery-9"


@pytest.fixture
def admin_client(db: None, api_key: str) -> Client:
    """An admin user's browser on another machine (a key is set: the service answers beyond this one)."""
    client = Client(HTTP_HOST=LOCAL_HOST, REMOTE_ADDR="192.0.2.50")
    client.force_login(User.objects.create_superuser("root", "root@example.com", PASSWORD))
    return client


def _rows(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action).order_by("id"))


def _no_password_in_rows() -> None:
    text = json.dumps(list(AuditEntry.objects.values("details", "resource", "user")))
    hashes = list(User.objects.values_list("password", flat=True))
    for secret in (PASSWORD, NEW_PASSWORD, *hashes):
        assert secret not in text


def test_createsuperuser_writes_a_row_naming_the_account_and_the_command_line(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", PASSWORD)
    call_command("createsuperuser", "--noinput", "--username", "alice", "--email", "a@example.com",
                 stdout=StringIO())
    (row,) = _rows("admin_user_create")
    assert (row.resource, row.user, row.success) == ("admin_user:alice", cli_actor(), True)
    assert row.details["via"] == "createsuperuser" and row.details["superuser"] is True
    assert row.origin == origin.process_origin()
    _no_password_in_rows()


def test_createsuperuser_refused_writes_no_account_row(db: None) -> None:
    with pytest.raises(Exception, match="reserved"):
        call_command("createsuperuser", "--noinput", "--username", "service", "--email", "s@example.com",
                     stdout=StringIO())
    assert _rows("admin_user_create") == []


def test_changepassword_writes_a_row_without_the_password(db: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from django.contrib.auth.management.commands import changepassword

    User.objects.create_user("bob", "bob@example.com", PASSWORD)
    monkeypatch.setattr(changepassword.Command, "_get_pass", lambda self, prompt="": NEW_PASSWORD)
    call_command("changepassword", "bob", stdout=StringIO())
    assert User.objects.get(username="bob").check_password(NEW_PASSWORD)
    (row,) = _rows("admin_user_password")
    assert (row.resource, row.user, row.details["via"]) == ("admin_user:bob", cli_actor(), "changepassword")
    _no_password_in_rows()


def test_an_account_added_in_the_admin_is_a_row_naming_who_added_it(admin_client: Client) -> None:
    response = admin_client.post("/admin/auth/user/add/", {
        "username": "bob", "password1": PASSWORD, "password2": PASSWORD, "usable_password": "true"})
    assert response.status_code == 302, response.content.decode()[:2000]
    (row,) = _rows("admin_user_create")
    assert (row.resource, row.user, row.details["via"]) == ("admin_user:bob", "admin:root", "admin")
    assert row.origin == "client:192.0.2.50"
    _no_password_in_rows()


def _change_form(user: User, **changes: Any) -> dict[str, Any]:
    data = {"username": user.username, "email": user.email, "first_name": "", "last_name": "",
            "is_active": "on", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
            "initial-date_joined_0": "2026-01-01", "initial-date_joined_1": "00:00:00"}
    if user.is_staff:
        data["is_staff"] = "on"
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def test_an_account_changed_in_the_admin_names_the_fields_changed(admin_client: Client) -> None:
    bob = User.objects.create_user("bob", "bob@example.com", PASSWORD)
    response = admin_client.post(f"/admin/auth/user/{bob.pk}/change/", _change_form(bob, is_staff="on"))
    assert response.status_code == 302, response.content.decode()[:2000]
    (row,) = _rows("admin_user_change")
    assert (row.resource, row.user) == ("admin_user:bob", "admin:root")
    assert row.details["fields"] == ["Staff status"]


def test_a_password_changed_in_the_admin_is_its_own_row_without_the_password(admin_client: Client) -> None:
    bob = User.objects.create_user("bob", "bob@example.com", PASSWORD)
    response = admin_client.post(f"/admin/auth/user/{bob.pk}/password/",
                                 {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"})
    assert response.status_code == 302, response.content.decode()[:2000]
    (row,) = _rows("admin_user_password")
    assert (row.resource, row.user) == ("admin_user:bob", "admin:root")
    assert _rows("admin_user_change") == []
    _no_password_in_rows()


def test_an_account_deleted_in_the_admin_is_a_row(admin_client: Client) -> None:
    bob = User.objects.create_user("bob", "bob@example.com", PASSWORD)
    response = admin_client.post(f"/admin/auth/user/{bob.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not User.objects.filter(username="bob").exists()
    (row,) = _rows("admin_user_delete")
    assert (row.resource, row.user) == ("admin_user:bob", "admin:root")


def test_accounts_deleted_together_in_the_admin_are_a_row_each(admin_client: Client) -> None:
    ids = [User.objects.create_user(name, f"{name}@example.com", PASSWORD).pk for name in ("bob", "carol")]
    response = admin_client.post("/admin/auth/user/", {"action": "delete_selected", "_selected_action": ids,
                                                       "post": "yes"})
    assert response.status_code == 302
    assert sorted(r.resource for r in _rows("admin_user_delete")) == ["admin_user:bob", "admin_user:carol"]
