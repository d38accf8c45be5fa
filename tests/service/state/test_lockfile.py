"""The lockfile: SecretZero compatibility, validation, atomic writes, the cache and the lock."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from secretsapi.service.errors import LockEntryCorrupted, LockfileUnreadable, LockTimeout
from secretsapi.service.state.lockfile import LockDocument, LockEntry, format_time, parse_time
from secretsapi.service.state.lockfile_io import read_lockfile, write_lockfile
from secretsapi.service.state.locks import lockfile_lock
from tests.factories import COMPAT

H1 = "a" * 64
H2 = "b" * 64


@pytest.fixture
def compat_lock(tmp_path: Path) -> Path:
    target = tmp_path / ".gitsecrets.lock"
    shutil.copyfile(COMPAT / ".gitsecrets.lock", target)
    return target


def _write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _doc_with_entry(tmp_path: Path, entry: object) -> LockDocument:
    path = _write_json(tmp_path / "lock.json", {"version": "1.0", "secrets": {"s": entry}})
    return read_lockfile(path)


def _entry(**changes: object) -> dict[str, object]:
    raw: dict[str, object] = {"hash": H1, "created_at": "2026-01-02T03:04:05+00:00",
                              "updated_at": "2026-01-02T03:04:05+00:00", "last_rotated": None,
                              "rotation_count": 0, "definition_hash": H2, "targets": {}}
    raw.update(changes)
    return raw


# --- SecretZero compatibility ------------------------------------------------------------

def test_compat_lockfile_has_four_entries(compat_lock: Path) -> None:
    doc = read_lockfile(compat_lock)
    assert doc.keys() == ["db_password", "api_key", "session_secret", "bootstrap_token"]


def test_compat_entry_keeps_timestamps_counts_and_targets(compat_lock: Path) -> None:
    entry = read_lockfile(compat_lock).entry("db_password")
    assert entry is not None
    assert entry.hash == "626f731b5f8e353ce814504d52c75883bc5a8f398e5d459a9deb9234345988ad"
    assert entry.created_at == "2026-11-22T02:58:24.392176+00:00"
    assert parse_time(entry.created_at) == datetime(2026, 11, 22, 2, 58, 24, 392176, tzinfo=UTC)
    assert entry.last_rotated is None and entry.rotation_count == 0
    assert entry.definition_hash == (
        "68d174ea3ed46357226bc05b75b8ef10b5012c9d26915f4c95a39560c37d7172")
    assert list(entry.targets) == ["local/file/out/dev.env", "local/file/out/dev.json"]


def test_compat_entry_extra_keeps_target_provenance(compat_lock: Path) -> None:
    entry = read_lockfile(compat_lock).entry("api_key")
    assert entry is not None
    assert list(entry.extra) == ["target_provenance"]
    provenance = entry.extra["target_provenance"]["local/file/out/dev.yaml"]
    assert provenance[0]["actor"]["client"] == "cli"


def test_dumps_of_unmodified_compat_document_reparses_equal_in_the_same_order(
        compat_lock: Path) -> None:
    original = json.loads(compat_lock.read_text())
    dumped = read_lockfile(compat_lock).dumps()
    again = json.loads(dumped)
    assert again == original
    assert json.dumps(again) == json.dumps(original)  # same key order at every level
    assert dumped.endswith("}\n")


def test_dumps_of_unmodified_compat_document_matches_the_file_text(compat_lock: Path) -> None:
    assert read_lockfile(compat_lock).dumps() == compat_lock.read_text().rstrip("\n") + "\n"


def test_rewriting_one_compat_entry_leaves_the_others_byte_identical(compat_lock: Path) -> None:
    doc = read_lockfile(compat_lock)
    entry = doc.entry("api_key")
    assert entry is not None
    doc.set_entry("api_key", replace(entry, rotation_count=1))
    write_lockfile(compat_lock, doc)
    before = json.loads((COMPAT / ".gitsecrets.lock").read_text())
    after = json.loads(compat_lock.read_text())
    assert after["secrets"]["db_password"] == before["secrets"]["db_password"]
    assert after["secrets"]["api_key"]["rotation_count"] == 1
    assert after["secretfile"] == before["secretfile"]


# --- entries -----------------------------------------------------------------------------

def test_set_entry_keeps_extra_keys_and_existing_key_order(compat_lock: Path) -> None:
    doc = read_lockfile(compat_lock)
    entry = doc.entry("session_secret")
    assert entry is not None
    doc.set_entry("session_secret", replace(entry, hash=H1, extra={}))
    raw = doc.raw["secrets"]["session_secret"]
    assert list(raw) == ["hash", "created_at", "updated_at", "last_rotated", "rotation_count",
                         "definition_hash", "targets", "target_provenance"]
    assert raw["hash"] == H1
    assert "local/file/out/dev.tfvars" in raw["target_provenance"]


def test_set_entry_appends_a_new_entry_with_its_extra_keys(tmp_path: Path) -> None:
    doc = LockDocument.empty()
    doc.set_entry("new", LockEntry(hash=H1, created_at="2026-01-02T03:04:05+00:00",
                                   updated_at="2026-01-02T03:04:05+00:00",
                                   targets={"local/file/a.env": H1}, extra={"note": [1, 2]}))
    raw = doc.raw["secrets"]["new"]
    assert list(raw)[-1] == "note" and raw["note"] == [1, 2]
    assert doc.entry("new") == LockEntry(hash=H1, created_at="2026-01-02T03:04:05+00:00",
                                         updated_at="2026-01-02T03:04:05+00:00",
                                         targets={"local/file/a.env": H1}, extra={"note": [1, 2]})


def test_entry_of_an_absent_key_is_none() -> None:
    assert LockDocument.empty().entry("nope") is None


def test_set_secretfile_updates_its_keys_and_keeps_the_others(compat_lock: Path) -> None:
    doc = read_lockfile(compat_lock)
    moment = datetime(2027, 1, 1, tzinfo=UTC)
    doc.set_secretfile("Secretfile.yml", H1, H2, ["a.szvar"], moment)
    block = doc.secretfile
    assert block is not None
    assert (block["hash"], block["variables_hash"], block["var_files"]) == (H1, H2, ["a.szvar"])
    assert block["synced_at"] == "2027-01-01T00:00:00+00:00"
    assert block["sync_identity"]["client"] == "cli" and block["manifest_spec_version"] == "1"


def test_set_secretfile_on_a_new_document_places_the_block_after_secrets() -> None:
    doc = LockDocument.empty()
    doc.set_secretfile("Secretfile.yml", H1, H2, [], "2027-01-01T00:00:00+00:00")
    assert list(doc.raw) == ["version", "secrets", "secretfile", "metadata"]


@pytest.mark.parametrize(("entry", "field"), [
    ("not an object", "not an object"),
    (_entry(hash="xyz"), "'hash'"),
    (_entry(hash=H1.upper()), "'hash'"),
    (_entry(created_at="yesterday"), "'created_at'"),
    (_entry(created_at=None), "'created_at'"),
    (_entry(updated_at=12), "'updated_at'"),
    (_entry(last_rotated="soon"), "'last_rotated'"),
    (_entry(rotation_count=-1), "'rotation_count'"),
    (_entry(rotation_count="3"), "'rotation_count'"),
    (_entry(rotation_count=True), "'rotation_count'"),
    (_entry(definition_hash="abc"), "'definition_hash'"),
    (_entry(targets=["x"]), "'targets'"),
    (_entry(targets={"local/file/a.env": 5}), "'targets'"),
])
def test_entry_with_wrong_types_raises_lock_entry_corrupted(
        tmp_path: Path, entry: object, field: str) -> None:
    doc = _doc_with_entry(tmp_path, entry)  # reading the file itself succeeds
    with pytest.raises(LockEntryCorrupted) as info:
        doc.entry("s")
    assert info.value.name == "s" and field in info.value.reason


def test_entry_defaults_missing_optional_fields(tmp_path: Path) -> None:
    doc = _doc_with_entry(tmp_path, {"hash": H1, "created_at": "2026-01-02T03:04:05"})
    entry = doc.entry("s")
    assert entry == LockEntry(hash=H1, created_at="2026-01-02T03:04:05",
                              updated_at="2026-01-02T03:04:05")


# --- timestamps --------------------------------------------------------------------------

def test_parse_time_reads_naive_timestamps_as_utc() -> None:
    assert parse_time("2026-01-02T03:04:05") == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_parse_time_converts_offsets_to_utc() -> None:
    parsed = parse_time("2026-01-02T05:04:05+02:00")
    assert parsed == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC) and parsed.tzinfo == UTC


def test_format_time_writes_utc_with_offset() -> None:
    moment = datetime(2026, 1, 2, 4, 4, 5, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert format_time(moment) == "2026-01-02T03:04:05.123456+00:00"


# --- unreadable files --------------------------------------------------------------------

def test_missing_lockfile_reads_as_an_empty_document(tmp_path: Path) -> None:
    doc = read_lockfile(tmp_path / "absent.lock")
    assert doc.raw == {"version": "1.0", "secrets": {}, "metadata": {}}


def test_invalid_json_is_unreadable_and_names_the_line_not_the_content(tmp_path: Path) -> None:
    path = tmp_path / "bad.lock"
    path.write_text('{\n  "version": "1.0",\n  "secrets": {"s": "hunter2-secret\n}\n')
    with pytest.raises(LockfileUnreadable) as info:
        read_lockfile(path)
    assert "line 3" in info.value.message and str(path) in info.value.message
    assert "hunter2" not in info.value.message


@pytest.mark.parametrize("data", [
    [1, 2],
    {"secrets": {}},
    {"version": 1, "secrets": {}},
    {"version": "1.0"},
    {"version": "1.0", "secrets": []},
    {"version": "1.0", "secrets": {}, "metadata": "x"},
])
def test_wrong_top_level_shape_is_unreadable(tmp_path: Path, data: object) -> None:
    with pytest.raises(LockfileUnreadable):
        read_lockfile(_write_json(tmp_path / "bad.lock", data))


def test_non_utf8_lockfile_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "bad.lock"
    path.write_bytes(b'{"version": "\xff"}')
    with pytest.raises(LockfileUnreadable, match="UTF-8"):
        read_lockfile(path)


# --- writing -----------------------------------------------------------------------------

def test_write_creates_a_0600_file_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    write_lockfile(path, LockDocument.empty())
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [".gitsecrets.lock"]
    assert path.read_text().endswith("}\n")


def test_write_keeps_the_mode_of_an_existing_file(compat_lock: Path) -> None:
    os.chmod(compat_lock, 0o640)
    write_lockfile(compat_lock, read_lockfile(compat_lock))
    assert os.stat(compat_lock).st_mode & 0o777 == 0o640


def test_written_document_reads_back_equal(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    doc = LockDocument.empty()
    doc.set_entry("s", LockEntry.from_raw("s", _entry()))
    doc.metadata["note"] = "é 日本"
    write_lockfile(path, doc)
    assert read_lockfile(path).raw == doc.raw


# --- the parse cache ---------------------------------------------------------------------

def test_each_read_returns_an_independent_document(compat_lock: Path) -> None:
    first = read_lockfile(compat_lock)
    first.raw["secrets"].pop("api_key")
    first.metadata["touched"] = True
    second = read_lockfile(compat_lock)
    assert "api_key" in second and "touched" not in second.metadata


def test_entry_extra_is_a_copy_that_does_not_leak_into_the_cache(compat_lock: Path) -> None:
    entry = read_lockfile(compat_lock).entry("api_key")
    assert entry is not None
    entry.extra["target_provenance"].clear()
    again = read_lockfile(compat_lock).entry("api_key")
    assert again is not None and again.extra["target_provenance"]


def test_cache_sees_a_change_with_the_same_size_mtime_and_inode(tmp_path: Path) -> None:
    # Coarse mtimes and reused inodes make stat keys collide; the content must decide.
    path = _write_json(tmp_path / "x.lock", {"version": "1.0", "secrets": {}, "metadata": {"n": 1}})
    before = os.stat(path)
    assert read_lockfile(path).metadata["n"] == 1
    with open(path, "r+b") as handle:
        data = handle.read().replace(b'"n": 1', b'"n": 2')
        handle.seek(0)
        handle.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size, before.st_mtime_ns, before.st_ino)
    assert read_lockfile(path).metadata["n"] == 2


# --- the lock ----------------------------------------------------------------------------

def _increment(path: str, cycles: int) -> None:
    for _ in range(cycles):
        with lockfile_lock(Path(path)):
            doc = read_lockfile(Path(path))
            doc.metadata["counter"] = doc.metadata.get("counter", 0) + 1
            write_lockfile(Path(path), doc)


@pytest.mark.slow
def test_lock_serializes_read_modify_write_across_processes(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    spawn = multiprocessing.get_context("spawn")
    workers = [spawn.Process(target=_increment, args=(str(path), 50)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    assert read_lockfile(path).metadata["counter"] == 100


def test_lock_uses_a_sidecar_file_and_never_the_lockfile(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    with lockfile_lock(path):
        assert not path.exists()
        assert (tmp_path / ".gitsecrets.lock.lck").exists()


def test_lock_times_out_with_lock_timeout_while_another_holder_has_it(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    errors: list[BaseException] = []

    def contender() -> None:
        try:
            with lockfile_lock(path, timeout=0.2):
                pass
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    with lockfile_lock(path):
        thread = threading.Thread(target=contender)
        thread.start()
        thread.join(10)
    assert len(errors) == 1 and isinstance(errors[0], LockTimeout)
    assert errors[0].code == "lock_timeout"


def test_lock_is_reentrant_in_one_thread(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    with lockfile_lock(path, timeout=0.2), lockfile_lock(path, timeout=0.2):
        pass


def test_lock_enters_and_exits_the_extra_lock_inside_the_file_lock(tmp_path: Path) -> None:
    events: list[str] = []

    @contextmanager
    def advisory() -> Iterator[None]:
        events.append("extra in")
        yield
        events.append("extra out")

    with lockfile_lock(tmp_path / "x.lock", extra=advisory()):
        events.append("body")
    assert events == ["extra in", "body", "extra out"]


def test_an_entry_read_for_a_status_leaves_out_its_other_keys(compat_lock: Path) -> None:
    doc = read_lockfile(compat_lock)
    full, bare = doc.entry("api_key"), doc.entry("api_key", extra=False)
    assert full is not None and bare is not None
    assert full.extra and bare.extra == {}
    assert replace(full, extra={}) == bare


@pytest.mark.parametrize("entry", [_entry(hash="x"), _entry(created_at="yesterday"), _entry(targets=["x"])])
def test_an_entry_read_for_a_status_is_checked_all_the_same(tmp_path: Path, entry: object) -> None:
    with pytest.raises(LockEntryCorrupted):
        _doc_with_entry(tmp_path, entry).entry("s", extra=False)
