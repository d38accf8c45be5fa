"""The admin's revoke action needs the change permission on API keys (issue 25, point 7): a
user who may only view keys could revoke every one of them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from apikeys import keys
from apikeys.models import ApiKey
from audit.models import AuditEntry
from tests.factories import LOCAL_HOST


def staff(*codenames: str) -> Client:
    user = User.objects.create_user("viewer", "viewer@example.com", "pw-for-tests", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="apikeys", codename__in=codenames))
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_a_view_only_admin_user_cannot_revoke_a_key() -> None:
    key = keys.create("ci", ["read"]).key
    client = staff("view_apikey")
    assert client.get("/admin/apikeys/apikey/").status_code == 200
    client.post("/admin/apikeys/apikey/", {"action": "revoke", "_selected_action": [ApiKey.objects.get().pk]})
    assert ApiKey.objects.get().revoked is None
    assert keys.resolve(key) is not None
    assert not AuditEntry.objects.filter(action="apikey_revoke").exists()


@pytest.mark.django_db
def test_a_view_only_admin_user_is_not_offered_the_revoke_action() -> None:
    keys.create("ci", ["read"])
    response = staff("view_apikey").get("/admin/apikeys/apikey/")
    assert response.status_code == 200
    assert b'value="revoke"' not in response.content


@pytest.mark.django_db
def test_an_admin_user_who_may_change_keys_revokes_one() -> None:
    keys.create("ci", ["read"])
    client = staff("view_apikey", "change_apikey")
    form = {"action": "revoke", "_selected_action": [ApiKey.objects.get().pk]}
    response = client.post("/admin/apikeys/apikey/", form)
    assert response.status_code == 302
    assert ApiKey.objects.get().revoked is not None
