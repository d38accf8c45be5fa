"""Issue 18.9: admin logins are throttled (django-axes) and every lockout is audited.

The attack: 30 wrong passwords, then the right one, logged in. Now a client address is locked
out after SERVICE_ADMIN_LOGIN_FAILURE_LIMIT failures until SERVICE_ADMIN_LOGIN_COOLOFF_SECONDS
pass without another; a username is never locked for every address (issue 36.9: anyone could
lock the real admin out).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import F
from django.test import Client

from audit.models import AuditEntry

# Left to make test (tests/tiers.py): rounds of failed logins until the lockout.
pytestmark = pytest.mark.thorough

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "right-password-for-tests"
LIMIT = 5  # the default of SERVICE_ADMIN_LOGIN_FAILURE_LIMIT


@pytest.fixture(autouse=True)
def fast_hashes(settings: Any) -> None:
    # Each login hashes a password; the default hasher's work would make these tests slow.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Keyed mode: the attacks come from other addresses, which insecure mode refuses outright.
    settings.SERVICE_API_KEY = "admin-throttle-test-key"


@pytest.fixture
def root(db: None) -> User:
    return User.objects.create_superuser("root", "root@example.com", PASSWORD)


def login(username: str, password: str, address: str = "127.0.0.1") -> Client:
    client = Client(REMOTE_ADDR=address, HTTP_HOST="admin.example")
    client.post("/admin/login/?next=/admin/", {"username": username, "password": password})
    return client


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def cool_off() -> None:
    """The database's clock moved on: every recorded failure is older than the cool-off."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))


def test_thirty_wrong_passwords_then_the_right_one_does_not_log_in(root: User) -> None:
    for i in range(30):
        assert not logged_in(login("root", f"guess-{i}"))
    client = Client()
    response = client.post("/admin/login/?next=/admin/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 429
    assert not logged_in(client)


def test_after_the_cool_off_the_right_password_logs_in(root: User) -> None:
    for i in range(30):
        login("root", f"guess-{i}")
    cool_off()
    assert logged_in(login("root", PASSWORD))


def test_fewer_failures_than_the_limit_do_not_lock(root: User) -> None:
    for i in range(LIMIT - 1):
        login("root", f"guess-{i}")
    assert logged_in(login("root", PASSWORD))


def test_one_client_guessing_many_usernames_is_locked_out(root: User) -> None:
    for i in range(LIMIT):
        login(f"user{i}", "guess", address="192.0.2.10")
    assert not logged_in(login("root", PASSWORD, address="192.0.2.10"))
    assert logged_in(login("root", PASSWORD, address="192.0.2.11"))


def test_failures_for_the_admin_from_anywhere_never_lock_the_real_admin_out_elsewhere(root: User) -> None:
    """Issue 36.9: the attacker sent five wrong passwords for "root" (from one address, then from
    many); the real admin, at their own address, still logs in, and the attacker stays locked."""
    for _ in range(LIMIT):
        login("root", "guess", address="198.51.100.7")
    for i in range(LIMIT):
        login("root", "guess", address=f"192.0.2.{20 + i}")
    assert logged_in(login("root", PASSWORD, address="203.0.113.5"))
    assert not logged_in(login("root", PASSWORD, address="198.51.100.7"))


def test_checked_failures_the_lockout_and_each_refused_attempt_are_audited(root: User) -> None:
    for i in range(30):
        login("root", f"guess-{i}")
    login("root", PASSWORD)
    failed = AuditEntry.objects.filter(action="admin_login", success=False)
    assert [(r.user, r.details["reason"]) for r in failed] == [("admin:root", "invalid_credentials")] * LIMIT
    started = AuditEntry.objects.get(action="admin_lockout", details__reason="limit_reached")
    assert (started.user, started.success, started.details["failures"], started.details["client"]) == (
        "admin:root", False, LIMIT, "127.0.0.1")
    refused = AuditEntry.objects.filter(action="admin_lockout", details__reason="locked_out")
    # Every attempt is counted once: checked ones as rows, refused ones in the minute's tally.
    assert failed.count() + sum(r.details["count"] for r in refused) == 31
    assert refused.count() <= 2
    assert not AuditEntry.objects.filter(action="admin_login", success=True).exists()


def test_the_lockout_rows_never_hold_a_password(root: User) -> None:
    for i in range(LIMIT + 3):
        login("root", f"secret-guess-{i}")
    login("root", PASSWORD)
    stored = str(list(AuditEntry.objects.values_list("user", "details")))
    assert "secret-guess" not in stored and PASSWORD not in stored


@pytest.mark.slow
def test_the_limits_are_settings(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    env.update(SERVICE_DATA_DIR=str(tmp_path), SERVICE_ADMIN_LOGIN_FAILURE_LIMIT="3",
               SERVICE_ADMIN_LOGIN_COOLOFF_SECONDS="60")
    code = ("import json, project.settings as s; "
            "print(json.dumps([s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME.total_seconds()]))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60, check=True)
    assert json.loads(result.stdout) == [3, 60.0]
