"""What a command line run spends before its answer: the definition an earlier run parsed is read
from the shared store (private files, never an environment value), the web interface is not
imported, and Django's checks run but for the web interface's (URLs, admin, templates)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import CommandError

from secretsapi.definition_store import STORE
from secretsapi.management.commands.status import Command as StatusCommand
from secretsapi.service.definition.model import Definition
from secretsapi.service.loading import loader
from secretsapi.service.state import lockfile_io
from tests.factories import Project, definition, file_secret
from tests.failing_checks import failing_check
from tests.fresh_imports import loaded_by

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def stored(settings: Any, tmp_path: Path) -> Path:
    """The shared store in a folder of this test's own."""
    folder = tmp_path / "cache" / "definitions"
    settings.DEFINITION_STORE = {**settings.DEFINITION_STORE, "LOCATION": str(folder)}
    return folder


@pytest.fixture
def synced(project: Project) -> Project:
    project.write(definition(*(file_secret(f"s{i}", f"out/{i}.env", rotation_period="30d") for i in range(3))))
    call_command("sync", stdout=StringIO())
    return project


def status(*args: str, **options: Any) -> str:
    out = StringIO()
    with contextlib.suppress(CommandError):
        call_command("status", "--json", *args, stdout=out, **options)
    return out.getvalue()


def a_new_process() -> None:
    loader.clear_definition_cache()


def forbid_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def parse(*args: Any, **kwargs: Any) -> Definition:
        raise AssertionError("parsed again")
    monkeypatch.setattr(loader, "_load", parse)


def test_a_second_run_answers_the_same_from_the_stored_definition(
    stored: Path, synced: Project, monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = status()
    a_new_process()
    forbid_parsing(monkeypatch)
    assert status() == first
    assert [row["name"] for row in json.loads(first)] == ["s0", "s1", "s2"]


def test_the_stored_files_are_private(stored: Path, synced: Project) -> None:
    status()
    files = list(stored.iterdir())
    assert files
    assert stat.S_IMODE(stored.stat().st_mode) == 0o700
    assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o600}


def test_an_unreadable_stored_entry_is_parsed_again(stored: Path, synced: Project) -> None:
    first = status()
    for entry in stored.iterdir():
        entry.write_bytes(b"\x80\x05 not a pickle")
    a_new_process()
    assert status() == first


def test_a_definition_holding_an_environment_value_leaves_nothing_on_disk(
    stored: Path, project: Project, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OUT_FOLDER", "a-folder-named-by-the-environment")
    project.write(definition(file_secret("s0", "${OUT_FOLDER}/0.env")))
    call_command("sync", stdout=StringIO())
    status()
    stored_bytes = b"".join(f.read_bytes() for f in stored.iterdir()) if stored.exists() else b""
    assert stored_bytes == b""


def test_a_failing_check_still_stops_the_command(synced: Project) -> None:
    with failing_check(checks.Tags.models, "tests.E001"), pytest.raises(CommandError, match=r"tests\.E001"):
        call_command("status", skip_checks=False, stdout=StringIO(), stderr=StringIO())


@pytest.mark.parametrize("tag", [checks.Tags.urls, checks.Tags.admin, checks.Tags.templates])
def test_the_web_interfaces_checks_are_left_to_serve_and_check(synced: Project, tag: str) -> None:
    with failing_check(tag, "tests.E002"):
        assert json.loads(status(skip_checks=False))[0]["exists"] is True


@pytest.mark.slow
def test_the_command_line_does_not_import_the_web_interface_or_unused_drivers() -> None:
    assert loaded_by("from secretsapi.management.commands import status",
                     ("drf_spectacular.openapi", "rest_framework.views", "pglock", "psycopg", "tomlkit")) == []


def test_a_command_line_run_drops_its_parse_caches_before_the_process_exits(synced: Project) -> None:
    StatusCommand(stdout=StringIO()).run_from_argv(["manage.py", "status"])
    assert (len(loader._cache), len(lockfile_io._cache)) == (0, 0)


def test_a_command_called_in_process_keeps_them_for_the_next_one(synced: Project) -> None:
    status()
    assert len(loader._cache) >= 1 and len(lockfile_io._cache) >= 1


def test_the_store_keeps_its_newest_entries_up_to_its_bound(stored: Path, settings: Any) -> None:
    settings.DEFINITION_STORE = {**settings.DEFINITION_STORE, "MAX_ENTRIES": 3}
    for n in range(5):
        STORE.set(f"key{n}", {"n": n})
        entry = STORE._path(f"key{n}")
        os.utime(entry, ns=(n * 10**9, n * 10**9))  # written in this order, whatever the clock's grain
    assert [STORE.get(f"key{n}") for n in range(5)] == [None, None, {"n": 2}, {"n": 3}, {"n": 4}]
    assert len(list(stored.iterdir())) == 3
