"""A status read through the shared store answers exactly what parsing the lockfile would: the
index is keyed on the file's bytes, served without parsing, and corruption still surfaces."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.errors import LockEntryCorrupted
from secretsapi.service.loading.loader import clear_definition_cache
from secretsapi.service.state import lockfile_io, status_index
from secretsapi.service.state.lockfile_io import clear_lockfile_cache
from secretsapi.service.status import index_lockfiles, secret_statuses
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import PickledStore, definition, file_secret


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(
        file_secret("db", "out/db.env", rotation_period="30d"), file_secret("api", "out/api.env"))))
    ws = Workspace(definition_path=path, environ={}, definition_store=PickledStore())
    assert sync(ws).secrets_failed == []
    return ws


def another_process() -> None:
    """Nothing parsed in this process any more: what a new command line run starts with."""
    clear_definition_cache()
    clear_lockfile_cache()


@pytest.fixture
def no_lockfile_parse(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Call it to make any further parse of a lockfile's JSON fail the test."""
    def forbid() -> None:
        def parse(*args: Any) -> Any:
            raise AssertionError("the lockfile was parsed")
        monkeypatch.setattr(lockfile_io, "_parse", parse)
    return forbid


def test_a_status_after_a_write_reads_the_index_not_the_json(ws: Workspace, no_lockfile_parse: Any) -> None:
    expected = secret_statuses(ws)
    index_lockfiles(ws)  # what the operations do after they write
    another_process()
    no_lockfile_parse()
    assert secret_statuses(ws) == expected


def test_the_index_follows_the_lockfiles_bytes(ws: Workspace) -> None:
    index_lockfiles(ws)
    raw = json.loads(ws.lockfile_path.read_text())
    raw["secrets"]["db"]["rotation_count"] = 7
    stat = ws.lockfile_path.stat()
    ws.lockfile_path.write_text(json.dumps(raw, indent=2))
    os.utime(ws.lockfile_path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same mtime: content decides
    another_process()
    assert {st.name: st.rotation_count for st in secret_statuses(ws)} == {"db": 7, "api": 0}


def test_a_corrupted_entry_is_reported_through_the_index_too(ws: Workspace) -> None:
    raw = json.loads(ws.lockfile_path.read_text())
    raw["secrets"]["db"]["hash"] = "not-a-hash"
    ws.lockfile_path.write_text(json.dumps(raw, indent=2))
    for _ in range(2):  # the first run builds the index from the JSON, the second reads it
        another_process()
        with pytest.raises(LockEntryCorrupted, match="'hash'"):
            secret_statuses(ws)
        assert secret_statuses(ws, ["api"])[0].exists


def test_a_missing_lockfile_is_every_secret_missing(ws: Workspace) -> None:
    ws.lockfile_path.unlink()
    another_process()
    assert [st.exists for st in secret_statuses(ws)] == [False, False]


def test_without_a_store_the_status_is_the_same(ws: Workspace) -> None:
    expected = secret_statuses(ws)
    another_process()
    assert secret_statuses(replace(ws, definition_store=None)) == expected


def test_a_process_holding_the_parse_does_not_read_the_store(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    index_lockfiles(ws)
    monkeypatch.setattr(status_index, "_key", lambda digest: pytest.fail("the store was consulted"))
    assert [st.exists for st in secret_statuses(ws)] == [True, True]


def test_local_secrets_are_read_from_the_machine_local_lockfile(tmp_path: Path) -> None:
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(file_secret("db", "out/db.env", local=True), file_secret("api"))))
    ws = Workspace(definition_path=path, environ={}, definition_store=PickledStore())
    sync(ws)
    index_lockfiles(ws)
    another_process()
    assert [st.exists for st in secret_statuses(ws)] == [True, True]
    assert "db" not in json.loads(ws.lockfile_path.read_text())["secrets"]


def test_a_process_keeps_the_index_it_read_while_the_file_is_unchanged(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A server's worker answering status after another process wrote: one read, not one a request.
    index_lockfiles(ws)
    another_process()
    monkeypatch.setattr(lockfile_io, "_SETTLED_NS", 0)  # the file counts as settled at once
    expected = secret_statuses(ws)
    monkeypatch.setattr(status_index, "read_lockfile_bytes", lambda path: pytest.fail("read again"))
    assert secret_statuses(ws) == expected


def test_a_kept_index_is_dropped_when_the_file_changes(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lockfile_io, "_SETTLED_NS", 0)
    another_process()
    secret_statuses(ws)
    raw = json.loads(ws.lockfile_path.read_text())
    raw["secrets"]["api"]["rotation_count"] = 3
    ws.lockfile_path.write_text(json.dumps(raw, indent=2))
    assert {st.name: st.rotation_count for st in secret_statuses(ws)}["api"] == 3
