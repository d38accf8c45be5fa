"""``manage.py audit``: the formats, the filters and ``--follow``."""

from __future__ import annotations

import csv
import io
import json
import os
import select
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from audit.export import CHUNK
from audit.models import AuditEntry
from audit.recorder import record
from tests.processes.live import migrated_sqlite

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def rows(db: None) -> list[int]:
    base = timezone.now() - timedelta(hours=1)
    made = []
    for i, (action, success) in enumerate([("sync", True), ("rotate_secrets", False), ("sync", True)]):
        pk = record(action=action, resource="secrets", user="service", success=success,
                    details={"i": i, "note": 'a "quoted", value'})
        AuditEntry.objects.filter(pk=pk).update(timestamp=base + timedelta(minutes=i))
        made.append(pk)
    return made


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("audit", *args, stdout=out)
    return out.getvalue()


def mine(entries: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    return [e for e in entries if e["action"] != "export_audit_logs"]


def test_jsonl_is_the_default_one_entry_per_line_oldest_first(rows: list[int]) -> None:
    got = mine([json.loads(line) for line in run().splitlines()])
    assert [e["details"]["i"] for e in got] == [0, 1, 2]
    assert set(got[0]) == {"timestamp", "action", "resource", "user", "details", "success",
                           "outcome", "project", "definition_project", "definition", "environment", "origin"}


def test_json_is_one_array_of_the_same_entries(rows: list[int]) -> None:
    assert mine(json.loads(run("--format", "json"))) == mine([json.loads(line) for line in run().splitlines()])


def test_json_of_nothing_is_an_empty_array(rows: list[int]) -> None:
    assert json.loads(run("--format", "json", "--action", "nothing")) == []


def test_csv_has_a_header_and_one_row_per_entry_with_details_as_json(rows: list[int]) -> None:
    table = list(csv.DictReader(io.StringIO(run("--format", "csv", "--action", "sync"))))
    assert [r["action"] for r in table] == ["sync", "sync"]
    assert list(table[0]) == ["timestamp", "action", "resource", "user", "success", "details", "outcome", "project",
                              "definition_project", "definition", "environment", "origin"]
    assert json.loads(table[0]["details"]) == {"i": 0, "note": 'a "quoted", value'}
    assert table[0]["success"] == "true"


@pytest.mark.thorough
def test_jsonl_writes_every_row_past_any_page_cap_reading_a_chunk_at_a_time(db: None) -> None:
    total = 2 * CHUNK + 500
    AuditEntry.objects.bulk_create(
        AuditEntry(action="bulk", resource="secrets", user="service", success=True, details={"n": n})
        for n in range(total)
    )
    with CaptureQueriesContext(connection) as asked:
        out = run("--format", "jsonl", "--action", "bulk")
    assert [json.loads(line)["details"]["n"] for line in out.splitlines()] == list(range(total))
    table = AuditEntry._meta.db_table
    reads = [q["sql"] for q in asked.captured_queries
             if q["sql"].startswith("SELECT") and f'FROM "{table}"' in q["sql"]]
    assert len(reads) == 3 and all(f"LIMIT {CHUNK}" in sql for sql in reads), reads


def test_since_and_the_filters_apply(rows: list[int]) -> None:
    since = AuditEntry.objects.get(pk=rows[1]).timestamp.isoformat()
    got = mine([json.loads(line) for line in run("--since", since, "--success", "true").splitlines()])
    assert [e["details"]["i"] for e in got] == [2]


def test_a_time_that_is_not_iso_8601_is_refused(rows: list[int]) -> None:
    with pytest.raises(CommandError, match="neither an ISO 8601 time"):
        run("--since", "yesterday")


def test_since_takes_a_duration_ago(rows: list[int]) -> None:
    assert [e["details"]["i"] for e in mine([json.loads(line) for line in run("--since", "2h").splitlines()])] == [
        0, 1, 2]
    assert mine([json.loads(line) for line in run("--since", "30min").splitlines()]) == []


def test_until_takes_a_duration_ago(rows: list[int]) -> None:
    got = mine([json.loads(line) for line in run("--until", "30min").splitlines()])
    assert [e["details"]["i"] for e in got] == [0, 1, 2]


def test_follow_refuses_a_json_array(rows: list[int]) -> None:
    with pytest.raises(CommandError, match="JSON lines or CSV"):
        run("--format", "json", "--follow")


def line_within(proc: subprocess.Popen[str], seconds: float) -> str:
    """The follower's next line, failing (not hanging) when none comes in time."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], seconds)
    assert ready, f"no line within {seconds} s"
    return proc.stdout.readline()


@pytest.mark.slow
def test_follow_prints_rows_written_after_it_started(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    env.update({"SERVICE_DATA_DIR": str(tmp_path), "PYTHONUNBUFFERED": "1"})
    manage = [sys.executable, "manage.py"]
    migrated_sqlite(tmp_path / "service.sqlite3")
    follower = subprocess.Popen([*manage, "audit", "--follow", "--interval", "0.2", "--action", "export_audit_logs"],
                                cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        # Its own row first (an export is audited), then one another process writes afterwards.
        assert json.loads(line_within(follower, 60))["details"]["follow"] is True
        subprocess.run([*manage, "audit", "--action", "made_later"], cwd=ROOT, env=env, check=True, timeout=120,
                       capture_output=True)
        later = json.loads(line_within(follower, 60))
        assert later["details"] == {"action": "made_later", "offset": 0, "follow": False}
    finally:
        follower.kill()
        follower.wait(timeout=30)
