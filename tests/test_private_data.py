"""deployment/private_data.py: what it tightens, and what it leaves alone."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from deployment.private_data import private_folder, private_sqlite, tighten
from tests.factories import usual_umask


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)



@pytest.fixture(name="usual_umask")
def usual_umask_fixture() -> Iterator[None]:
    with usual_umask():
        yield


def test_a_new_database_and_its_journals_are_0600(tmp_path: Path, usual_umask: None) -> None:
    database = tmp_path / "data" / "service.sqlite3"
    private_sqlite(database)
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x)")
        db.commit()
        assert {p.name: mode(p) for p in database.parent.iterdir()} == {
            "service.sqlite3": 0o600, "service.sqlite3-wal": 0o600, "service.sqlite3-shm": 0o600}
    assert mode(database.parent) == 0o700


def test_an_existing_folder_of_a_database_elsewhere_keeps_its_mode(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    private_sqlite(tmp_path / "audit.sqlite3")
    assert mode(tmp_path) == 0o755


def test_a_missing_data_folder_is_created_0700(tmp_path: Path, usual_umask: None) -> None:
    private_folder(tmp_path / "a" / "data")
    assert mode(tmp_path / "a" / "data") == 0o700


def test_a_symlink_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not ours")
    elsewhere.chmod(0o644)
    (tmp_path / "secret_key").symlink_to(elsewhere)
    tighten(tmp_path / "secret_key")
    assert mode(elsewhere) == 0o644


def test_a_shared_sticky_folder_keeps_its_mode(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    tighten(shared)
    assert mode(shared) == 0o1777
