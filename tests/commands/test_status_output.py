"""``manage.py status`` for people: aligned columns, times to the second, the next due date."""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from secretsapi.actions import workspaces
from secretsapi.service import secret_statuses
from tests.factories import Project, definition, file_secret

pytestmark = pytest.mark.django_db

SYNCED = {"created_at": "2026-01-02T03:04:05.678901+00:00", "updated_at": "2026-01-02T03:04:05.678901+00:00"}


def status(*args: str) -> str:
    out = StringIO()
    with contextlib.suppress(CommandError):
        call_command("status", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def synced(project: Project) -> Project:
    project.write(definition(
        file_secret("db", "out/app.env", rotation_period="30d"),
        file_secret("a_much_longer_secret_name_than_usual", "out/b.env", rotation_period="1w"),
        file_secret("bootstrap", "out/c.env", one_time=True),
        file_secret("plain", "out/d.env"),
    ))
    call_command("sync", stdout=StringIO())
    lock = project.lock()
    for entry in lock["secrets"].values():
        entry.update(SYNCED)
    project.save_lock(lock)
    return project


def test_status_shows_times_to_the_second_and_the_next_due_date(synced: Project) -> None:
    rows = {line.split()[0]: line.split() for line in status().splitlines()[1:]}
    assert rows["db"][2:] == ["2026-01-02", "03:04:05", "2026-01-02", "03:04:05", "generated", "never", "0",
                              "2026-02-01", "03:04:05"]
    assert rows["a_much_longer_secret_name_than_usual"][-2:] == ["2026-01-09", "03:04:05"]


def test_a_one_time_secret_or_one_without_a_period_is_never_due(synced: Project) -> None:
    rows = {line.split()[0]: line.split() for line in status().splitlines()[1:]}
    assert rows["bootstrap"][-1] == "never" and rows["plain"][-1] == "never"


def test_the_columns_line_up_whatever_the_names(synced: Project) -> None:
    lines = status().splitlines()
    starts = {line.index(word) for line, word in zip(lines, ["CREATED", "2026", "2026", "2026", "2026"], strict=True)}
    assert len(starts) == 1, lines


def test_a_missing_secret_is_a_row_of_its_own(synced: Project) -> None:
    lock = synced.lock()
    del lock["secrets"]["plain"]
    synced.save_lock(lock)
    lines = status("plain").splitlines()
    assert lines[1].split()[:3] == ["plain", "not", "generated"]


def test_status_json_carries_the_due_date(synced: Project) -> None:
    assert json.loads(status("db", "--json"))["due_at"] == "2026-02-01T03:04:05.678901+00:00"


def test_the_json_of_every_secret_is_each_status_field_for_field(synced: Project) -> None:
    expected = [asdict(st) for st in secret_statuses(workspaces.workspace())]
    assert json.loads(status("--json")) == expected
    assert {row["name"] for row in expected} == {"db", "a_much_longer_secret_name_than_usual", "bootstrap", "plain"}
