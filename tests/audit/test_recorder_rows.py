"""Each row record() writes must read back through the ORM
exactly as saved, on SQLite in-process and on a real PostgreSQL (where a page of the log,
read with its ids as a LIMIT/OFFSET subquery, is checked too)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from audit.models import AuditEntry
from audit.recorder import begin, finish, record
from tests.processes.live import run_in_django

ROOT = Path(__file__).resolve().parents[2]
DETAILS = {"names": ["a", "é 日本"], "count": 3, "nested": {"ok": True, "none": None, "f": 1.5}}

# The same check, run by a Django process against the database DATABASE_URL names.
CHECK = f"details = {DETAILS!r}\n" + """
from audit.models import AuditEntry
from audit.recorder import begin, finish, record
from django.utils import timezone
before = timezone.now()
row = record(action="sync", resource="secret:x", user=None, success=False, details=details)
got = AuditEntry.objects.get(pk=row)
assert (got.action, got.resource, got.user, got.success, got.details) == ("sync", "secret:x", None, False, details)
assert before <= got.timestamp <= timezone.now() and got.timestamp.utcoffset() is not None
second = record(action="a", resource="r", user="u", success=True)
assert second > row and AuditEntry.objects.get(pk=second).details == {}
started = begin(action="sync", resource="secrets", user="service")
finish(started, success=True, details={"n": 1})
done = AuditEntry.objects.get(pk=started)
assert (done.success, done.details) == (True, {"n": 1})
from secretsapi.actions import auditlog
for i in range(12):
    record(action="page", resource="p", user=None, success=True, details={"i": i})
page = auditlog.read_audit_logs(actor=None, limit=3, offset=4, action="page", resource="p")
assert [e.details["i"] for e in page] == [7, 6, 5], [e.details for e in page]
from audit.models import AuditMention
started = begin(action="sync", resource="secrets", user="service", details={"secret_name": "x"})
finish(started, success=False, details={"secret_name": "x", "generated": ["y"], "failed": ["x"]})
assert sorted(AuditMention.objects.filter(entry_id=started).values_list("secret", flat=True)) == ["x", "y"]
assert [e.id for e in auditlog.read_audit_logs(actor=None, limit=5, offset=0, secret="y")] == [started]
failed = auditlog.read_audit_logs(actor=None, limit=50, offset=0, success=False)
assert failed and all(not e.success for e in failed)
print("rows ok")
"""


@pytest.mark.django_db
def test_a_recorded_row_reads_back_field_for_field() -> None:
    before = timezone.now()
    row = record(action="sync", resource="secret:x", user=None, success=False, details=DETAILS)
    got = AuditEntry.objects.get(pk=row)
    assert (got.action, got.resource, got.user, got.success, got.details) == (
        "sync", "secret:x", None, False, DETAILS)
    assert before <= got.timestamp <= timezone.now() and got.timestamp.utcoffset() == timedelta(0)


@pytest.mark.django_db
def test_the_returned_id_is_the_saved_row_s() -> None:
    first = record(action="a", resource="r", user="u", success=True)
    second = record(action="a", resource="r", user="u", success=True)
    assert second > first
    assert list(AuditEntry.objects.order_by("id").values_list("id", flat=True)) == [first, second]


@pytest.mark.django_db
def test_an_intent_row_is_completed_in_place() -> None:
    started = begin(action="sync", resource="secrets", user="service", details={"dry_run": False})
    assert AuditEntry.objects.get(pk=started).details == {"dry_run": False, "state": "started"}
    finish(started, success=True, details={"dry_run": False, "generated": 2})
    done = AuditEntry.objects.get(pk=started)
    assert (done.success, done.details) == (True, {"dry_run": False, "generated": 2})


@pytest.mark.slow
@pytest.mark.postgres
def test_rows_read_back_field_for_field_on_postgresql(pg_migrated: str, tmp_path: Path) -> None:
    result = run_in_django(pg_migrated, tmp_path, CHECK)
    assert result.returncode == 0 and "rows ok" in result.stdout, result.stderr[-2000:]
