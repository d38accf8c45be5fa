"""Names that read like the service's own actors (issue 25, point 7): keys named ``cli:root``,
``admin:alice``, ``Service`` or ``scheduler`` were accepted, so their rows read exactly like a
command-line run; a failed admin login as ``service`` landed under ``?user=service``. These
names are reserved, in any case, for keys and admin users; admin logins are ``admin:<name>``."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.test import APIClient

from apikeys import keys
from apikeys.models import ApiKey
from audit.models import AuditEntry
from tests.factories import LOCAL_HOST

RESERVED = ["cli:root", "admin:alice", "Service", "service", "scheduler", "SCHEDULER", "CLI:root", "Admin:x"]
RULE = "are reserved (in any case)"
RULE_PATTERN = r"are reserved \(in any case\)"


@pytest.mark.parametrize("name", RESERVED)
def test_the_apikey_command_refuses_a_reserved_name_naming_the_rule(db: None, name: str) -> None:
    with pytest.raises(CommandError, match=RULE_PATTERN):
        call_command("apikey", "create", name, "--scope", "read", stdout=StringIO(), stderr=StringIO())
    assert not ApiKey.objects.exists()


@pytest.mark.parametrize("name", RESERVED)
def test_no_key_creation_path_takes_a_reserved_name(db: None, name: str) -> None:
    with pytest.raises(keys.KeyRefused, match=RULE_PATTERN):
        keys.create(name, ["read"])


@pytest.mark.parametrize("name", ["ci", "deploy@prod", "my-cli", "administrator", "services"])
def test_names_that_only_look_alike_are_still_accepted(db: None, name: str) -> None:
    assert keys.create(name, ["read"]).name == name


def admin_login(username: str, password: str) -> None:
    Client(HTTP_HOST=LOCAL_HOST).post("/admin/login/?next=/admin/", {"username": username, "password": password})


def test_a_failed_admin_login_as_service_is_not_a_row_of_the_service_key(authed_api: APIClient) -> None:
    admin_login("service", "guess-1234")
    response = authed_api.get("/audit/logs", {"user": "service", "action": "admin_login"})
    assert response.status_code == 200
    assert response.json()["entries"] == []
    row = AuditEntry.objects.get(action="admin_login")
    assert (row.user, row.success) == ("admin:service", False)


def test_admin_logins_are_listed_under_their_admin_name(authed_api: APIClient) -> None:
    User.objects.create_superuser("alice", "alice@example.com", "pw-for-tests")
    admin_login("alice", "pw-for-tests")
    rows = authed_api.get("/audit/logs", {"user": "admin:alice"}).json()["entries"]
    assert [(r["action"], r["success"]) for r in rows] == [("admin_login", True)]


@pytest.mark.parametrize("name", ["service", "Scheduler"])
def test_createsuperuser_refuses_a_reserved_username(db: None, name: str) -> None:
    with pytest.raises(CommandError, match=RULE_PATTERN):
        call_command("createsuperuser", "--noinput", "--username", name, "--email", "a@example.com",
                     stdout=StringIO(), stderr=StringIO())
    assert not User.objects.exists()


def test_createsuperuser_refuses_a_reserved_username_from_the_environment(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "service")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "pw-for-tests-9c1")
    with pytest.raises(CommandError, match=RULE_PATTERN):
        call_command("createsuperuser", "--noinput", "--email", "a@example.com", stdout=StringIO(), stderr=StringIO())
    assert not User.objects.exists()


def test_createsuperuser_still_creates_an_ordinary_admin(db: None) -> None:
    call_command("createsuperuser", "--noinput", "--username", "alice", "--email", "a@example.com",
                 stdout=StringIO(), stderr=StringIO())
    assert User.objects.get().username == "alice"


@pytest.fixture
def admin_client(db: None) -> Client:
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-for-tests"))
    return client


def test_the_admin_refuses_to_add_a_user_with_a_reserved_name(admin_client: Client) -> None:
    form = {"username": "Service", "password1": "a-Long-pass-9c1x", "password2": "a-Long-pass-9c1x",
            "usable_password": "true"}
    response = admin_client.post("/admin/auth/user/add/", form)
    assert response.status_code == 200  # the form again, with its error
    assert RULE in response.content.decode()
    assert not User.objects.filter(username="Service").exists()


def test_the_admin_refuses_to_rename_a_user_to_a_reserved_name(admin_client: Client) -> None:
    user = User.objects.create_user("bob", "bob@example.com", "pw-for-tests")
    form = {"username": "scheduler", "email": "bob@example.com", "is_active": "on",
            "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    response = admin_client.post(f"/admin/auth/user/{user.pk}/change/", form)
    assert response.status_code == 200
    assert RULE in response.content.decode()
    user.refresh_from_db()
    assert user.username == "bob"


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def test_createsuperuser_asks_again_when_a_reserved_username_is_typed(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    typed = iter(["service", "alice", "alice@example.com"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(typed))
    monkeypatch.setattr("getpass.getpass", lambda prompt="": "a-Long-pass-9c1x")
    errors = StringIO()
    call_command("createsuperuser", stdin=Terminal(), stdout=StringIO(), stderr=errors)
    assert RULE in errors.getvalue()
    assert list(User.objects.values_list("username", flat=True)) == ["alice"]
