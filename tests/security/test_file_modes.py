"""Issue 18, point 6: what the service keeps (the SQLite database with the audit log, admin
password hashes and session keys; its -wal and -shm; the secret key; lock files) is readable by
its user only, and so is the data folder, also when an earlier version left them open."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.factories import usual_umask
from tests.processes.live import LiveServer, many_secrets, server_env, start_server, write_definition

pytestmark = pytest.mark.slow

DATABASE_FILES = ("service.sqlite3", "service.sqlite3-wal", "service.sqlite3-shm")



def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The data folder of a running server that synced and wrote audit rows (SQLite removes the
    -wal and -shm files when its last connection closes, so the server keeps running)."""
    root = tmp_path_factory.mktemp("modes")
    config = write_definition(root, many_secrets(2, 1))
    with usual_umask():
        server = start_server(server_env(data_dir=root / "data", config=config, secret_key=None), root / "serve.log",
                              migrated=False)
    try:
        assert server.call("POST", "/sync", {})[0] == 200
        assert server.call("GET", "/audit/logs")[0] == 200
        yield root / "data"
    finally:
        server.kill()


def test_the_data_folder_is_private(data: Path) -> None:
    assert mode(data) == 0o700


@pytest.mark.parametrize("name", DATABASE_FILES)
def test_the_database_and_its_journals_are_private(data: Path, name: str) -> None:
    assert mode(data / name) == 0o600


def test_every_file_in_the_data_folder_is_private(data: Path) -> None:
    modes = {path.name: oct(mode(path)) for path in data.iterdir()}
    assert {"secret_key", "migrate.lck", "service.sqlite3.audit.lck"} <= set(modes)
    assert {name: m for name, m in modes.items() if int(m, 8) & 0o077} == {}


def test_files_an_earlier_version_left_open_are_tightened_at_start(
    tmp_path: Path, servers: Callable[..., LiveServer],
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    database = data / "service.sqlite3"
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x)")
        db.commit()
        (data / "service.sqlite3-wal").touch()
        (data / "service.sqlite3-shm").touch()
    for name in ("secret_key", "migrate.lck", "service.sqlite3.audit.lck"):
        (data / name).write_text("x" * 60 if name == "secret_key" else "")
    for path in data.iterdir():
        path.chmod(0o644)
    data.chmod(0o755)
    config = write_definition(tmp_path, many_secrets(1, 1))
    with usual_umask():
        servers(server_env(data_dir=data, config=config, secret_key=None), tmp_path / "serve.log", migrated=False)
    assert mode(data) == 0o700
    assert {path.name: oct(mode(path)) for path in data.iterdir() if mode(path) & 0o077} == {}
