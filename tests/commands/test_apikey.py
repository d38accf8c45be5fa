"""``manage.py apikey``: create prints the key once, list never does, revoke, rotate."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apikeys import keys
from apikeys.models import ApiKey
from audit.models import AuditEntry


def _run(*args: str) -> str:
    out = StringIO()
    call_command("apikey", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_create_prints_a_recognisable_key_that_resolves(db: None) -> None:
    key = _run("create", "ci", "--scope", "read", "--scope", "write").strip()
    assert key.startswith("sk_")
    row = keys.resolve(key)
    assert row is not None and (row.name, row.scopes) == ("ci", frozenset({"read", "write"}))


def test_create_with_expires_sets_the_expiry(db: None) -> None:
    _run("create", "ci", "--scope", "read", "--expires", "90d")
    row = ApiKey.objects.get(name="ci")
    assert row.expires is not None and (row.expires - row.created).days == 90


def test_list_shows_every_field_but_never_the_key(db: None) -> None:
    key = _run("create", "ci", "--scope", "audit").strip()
    listing = _run("list")
    assert "ci\taudit\t" in listing
    assert key.split("_", 2)[2] not in listing


def test_revoke_marks_the_key_revoked(db: None) -> None:
    key = _run("create", "ci", "--scope", "read").strip()
    _run("revoke", "ci")
    assert keys.resolve(key) is None
    assert ApiKey.objects.get(name="ci").revoked is not None


def test_rotate_prints_a_new_key_and_keeps_the_old_one_for_the_grace(db: None) -> None:
    old = _run("create", "ci", "--scope", "read").strip()
    new = _run("rotate", "ci", "--grace", "1h").strip()
    assert new != old and keys.resolve(new) is not None and keys.resolve(old) is not None


@pytest.mark.parametrize(
    "args",
    [
        ("create", "service", "--scope", "read"),
        ("create", "bad name", "--scope", "read"),
        ("create", "ci", "--scope", "read", "--expires", "soon"),
        ("revoke", "nobody"),
        ("rotate", "nobody"),
    ],
)
def test_impossible_requests_fail_with_one_line(db: None, args: tuple[str, ...]) -> None:
    with pytest.raises(CommandError):
        _run(*args)


def test_a_name_is_taken_even_after_revocation(db: None) -> None:
    _run("create", "ci", "--scope", "read")
    _run("revoke", "ci")
    with pytest.raises(CommandError, match="exists already"):
        _run("create", "ci", "--scope", "read")


def test_create_rotate_and_revoke_are_audited_by_name_never_with_the_key(db: None) -> None:
    out = StringIO()
    call_command("apikey", "create", "deploy", "--scope", "read", stdout=out, stderr=StringIO())
    key = out.getvalue().strip()
    call_command("apikey", "rotate", "deploy", stdout=StringIO(), stderr=StringIO())
    call_command("apikey", "revoke", "deploy", stdout=StringIO(), stderr=StringIO())
    rows = list(AuditEntry.objects.filter(resource="apikey:deploy").order_by("id"))
    assert [(r.action, r.success, str(r.user).startswith("cli:")) for r in rows] == [
        ("apikey_create", True, True), ("apikey_rotate", True, True), ("apikey_revoke", True, True)]
    assert rows[0].details["scopes"] == ["read"]
    assert all(key not in str(r.details) and key.rsplit("_", 1)[1] not in str(r.details) for r in rows)


def test_expires_in_minutes_is_written_min(db: None) -> None:
    _run("create", "ci", "--scope", "read", "--expires", "30min")
    row = ApiKey.objects.get(name="ci")
    assert row.expires is not None and (row.expires - row.created).total_seconds() == 30 * 60


def test_expires_with_a_bare_m_is_refused_asking_minutes_or_months(db: None) -> None:
    with pytest.raises(CommandError, match="'30m' is ambiguous: write 30min for minutes or 30mo for months"):
        _run("create", "ci", "--scope", "read", "--expires", "30m")
    assert not ApiKey.objects.filter(name="ci").exists()


def test_a_bad_expiry_names_every_unit(db: None) -> None:
    with pytest.raises(CommandError, match=r"s \(seconds\), min \(minutes\), h \(hours\), d \(days\), w \(weeks\), "
                                           r"mo \(months of 30 days\) or y \(years of 365 days\)"):
        _run("create", "ci", "--scope", "read", "--expires", "soon")


def test_rotate_with_no_grace_retires_the_old_key_at_once(db: None) -> None:
    old = _run("create", "ci", "--scope", "read").strip()
    _run("rotate", "ci", "--grace", "0")
    assert keys.resolve(old) is None
