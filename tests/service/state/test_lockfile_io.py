"""Lockfile I/O: the written text is exactly json.dumps(indent=2); the parse cache; copy-on-write."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.state import lockfile_io
from secretsapi.service.state.lockfile import LockDocument, LockEntry
from secretsapi.service.state.lockfile_io import read_lockfile, write_lockfile
from tests.factories import COMPAT

H = "c" * 64


def _json_text(raw: dict[str, Any]) -> str:
    return json.dumps(raw, indent=2, ensure_ascii=False) + "\n"


DOCUMENTS: dict[str, dict[str, Any]] = {
    "empty object": {},
    "no secrets yet": {"version": "1.0", "secrets": {}, "metadata": {}},
    "nested extras and unicode": {
        "version": "1.0",
        "secrets": {
            "a": {"hash": H, "targets": {"local/file/x": {"hash": H, "n": [1, {"é": None}]}}, "extra": []},
            "日本": {"hash": H, "targets": {}, "note": "line\nbreak \"quoted\" \u2028"},
        },
        "secretfile": {"filename": "Secretfile.yml", "var_files": []},
        "metadata": {"nested": {"deep": [[], {}, [1.5, True, False]]}},
        "target_provenance": {"k": "v"},
    },
    "secrets not an object (kept as read)": {"version": "1.0", "secrets": {"only": {}}},
}


@pytest.mark.parametrize("raw", list(DOCUMENTS.values()), ids=list(DOCUMENTS))
def test_written_text_is_exactly_the_indented_json(raw: dict[str, Any]) -> None:
    assert LockDocument(raw).dumps() == _json_text(raw)


def test_the_compat_lockfile_is_written_back_byte_for_byte_but_the_final_newline(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    shutil.copyfile(COMPAT / ".gitsecrets.lock", path)
    original = path.read_bytes()
    write_lockfile(path, read_lockfile(path))
    assert path.read_bytes() == original.rstrip(b"\n") + b"\n"


def test_a_large_document_is_written_in_chunks_of_one_entry() -> None:
    raw = {"version": "1.0", "secrets": {f"s{i}": {"hash": H, "targets": {}} for i in range(1000)}}
    chunks = list(LockDocument(raw).chunks())
    assert "".join(chunks) == _json_text(raw)
    assert max(len(chunk) for chunk in chunks) < 200



# Every character but the surrogates, in strings as values and as keys.
EVERY_CHARACTER = "".join(map(chr, itertools.chain(range(0xD800), range(0xE000, 0x110000))))
AWKWARD: dict[str, Any] = {
    "every character": {"v": EVERY_CHARACTER, EVERY_CHARACTER[:300]: [EVERY_CHARACTER[-300:]]},
    "integers at and past 64 bits": {"a": [2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**64) - 1, 10**40]},
    "floats": {"f": [1.5, 0.1, 1e-05, 1e16, 1e22, -0.0, 123456789.0, float("inf"), float("-inf"), float("nan")]},
    "a float deep in an otherwise plain entry": {"hash": H, "targets": {}, "extra": [{"n": [1, {"x": 2.5e-7}]}]},
    "a lone surrogate": {"note": "a\ud800b", "\udfff": 1},
    "keys that are not strings": {1: "one", False: "no", None: "none", 2.5: "f"},
    "empty and nested containers": {"a": {}, "b": [], "c": [[], [{}], {"d": [[[]]]}]},
    "booleans and null": {"t": True, "f": False, "n": None, "l": [True, None, 0, -1]},
    "nested past orjson's depth": {"deep": json.loads("[" * 300 + "]" * 300)},
}


@pytest.mark.parametrize("raw", list(AWKWARD.values()), ids=list(AWKWARD))
def test_every_entry_is_written_as_the_standard_library_writes_it(raw: dict[str, Any]) -> None:
    document = {"version": "1.0", "secrets": {"entry": raw}, "metadata": raw}
    assert LockDocument(document).dumps() == _json_text(document)


def test_subclasses_of_the_json_types_are_written_as_the_standard_library_writes_them() -> None:
    class Name(str):
        pass

    class Count(int):
        def __repr__(self) -> str:
            return "Count()"

    class Table(dict):  # type: ignore[type-arg]
        pass

    entry = {"name": Name("x"), "count": Count(7), "table": Table(a=1), "flag": True}
    document = {"version": "1.0", "secrets": {"entry": entry}}
    assert LockDocument(document).dumps() == _json_text(document)


# --- the parse cache ---------------------------------------------------------------------------

def _write(path: Path, raw: dict[str, Any]) -> Path:
    path.write_text(_json_text(raw), encoding="utf-8")
    return path


def _opens(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Paths opened by read_lockfile from now on."""
    opened: list[Path] = []
    real_open = Path.open

    def counting_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(self)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counting_open)
    return opened


def test_a_settled_unchanged_file_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lockfile_io, "_SETTLED_NS", 0)  # every file counts as settled at once
    path = _write(tmp_path / "x.lock", {"version": "1.0", "secrets": {}, "metadata": {"n": 1}})
    read_lockfile(path)
    opened = _opens(monkeypatch)
    assert read_lockfile(path).metadata["n"] == 1
    assert opened == []


def test_a_recently_written_file_is_read_again_and_compared_by_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "x.lock", {"version": "1.0", "secrets": {}, "metadata": {"n": 1}})
    read_lockfile(path)
    opened = _opens(monkeypatch)
    read_lockfile(path)
    assert opened == [path]


def test_exact_reads_the_bytes_even_when_stat_says_nothing_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A network filesystem may answer stat from a stale cache: writers must not trust it.
    monkeypatch.setattr(lockfile_io, "_SETTLED_NS", 0)
    path = _write(tmp_path / "x.lock", {"version": "1.0", "secrets": {}, "metadata": {"n": 1}})
    read_lockfile(path)
    stale = os.stat(path)
    _write(path, {"version": "1.0", "secrets": {}, "metadata": {"n": 2}})
    monkeypatch.setattr("os.stat", lambda _path: stale)
    assert read_lockfile(path).metadata["n"] == 1  # what a stale stat makes a reader see
    assert read_lockfile(path, exact=True).metadata["n"] == 2


def test_the_same_content_rewritten_reuses_the_parsed_document(tmp_path: Path) -> None:
    raw = {"version": "1.0", "secrets": {}, "metadata": {"n": 1}}
    path = _write(tmp_path / "x.lock", raw)
    first = read_lockfile(path)
    _write(path, raw)  # a new inode and timestamps, the same bytes
    assert read_lockfile(path)._raw is first._raw


def test_the_cache_keeps_a_digest_not_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.lock", {"version": "1.0", "secrets": {}, "metadata": {}})
    read_lockfile(path)
    cached = lockfile_io._cache[str(path.absolute())]
    assert len(cached.digest) == 32 and not any(isinstance(v, bytes) and len(v) > 32 for v in vars_of(cached))


def test_a_removed_lockfile_leaves_the_cache(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.lock", {"version": "1.0", "secrets": {}, "metadata": {}})
    read_lockfile(path)
    path.unlink()
    assert read_lockfile(path)._raw == LockDocument.empty()._raw
    assert str(path.absolute()) not in lockfile_io._cache


def vars_of(obj: Any) -> list[Any]:
    return [getattr(obj, name) for name in obj.__slots__]


# --- copy-on-write -------------------------------------------------------------------------------

def test_changes_to_one_read_never_reach_another(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    shutil.copyfile(COMPAT / ".gitsecrets.lock", path)
    first = read_lockfile(path)
    names = first.keys()
    first.set_entry(names[0], LockEntry(names[0], H, "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00+00:00"))
    first.raw["secrets"].pop(names[1])
    first.set_secretfile("Other.yml", H, H, [], "2026-01-01T00:00:00+00:00")
    first.metadata["touched"] = True
    second = read_lockfile(path)
    assert second.keys() == names
    entry = second.entry(names[0])
    assert entry is not None and entry.hash != H
    assert (second.secretfile or {})["filename"] == "Secretfile.yml"
    assert "touched" not in second.metadata


# --- the writer's copy -------------------------------------------------------------------------

def _written(tmp_path: Path) -> tuple[Path, LockDocument]:
    path = tmp_path / ".gitsecrets.lock"
    shutil.copyfile(COMPAT / ".gitsecrets.lock", path)
    doc = read_lockfile(path)
    doc.metadata["written_by"] = "test"
    write_lockfile(path, doc)
    return path, doc


def test_a_read_after_a_write_takes_the_written_document_without_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = _written(tmp_path)
    expected = json.loads(path.read_text())

    def no_parse(*args: Any) -> Any:
        raise AssertionError("parsed again")

    monkeypatch.setattr(lockfile_io, "_parse", no_parse)
    assert read_lockfile(path)._raw == expected


def test_changing_a_written_document_afterwards_never_reaches_the_cache(tmp_path: Path) -> None:
    path, doc = _written(tmp_path)
    doc.metadata["changed_after"] = True
    doc.raw["secrets"].pop(doc.keys()[0])
    again = read_lockfile(path)
    assert "changed_after" not in again.metadata and again.keys() == list(json.loads(path.read_text())["secrets"])


def test_a_file_replaced_after_the_write_is_parsed_again(tmp_path: Path) -> None:
    path, _ = _written(tmp_path)
    _write(path, {"version": "1.0", "secrets": {}, "metadata": {"other": "writer"}})
    assert read_lockfile(path).metadata == {"other": "writer"}


def test_a_sync_plans_on_the_lockfile_bytes_even_when_stat_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another writer generated "a" while this process's stat of the lockfile stayed stale (a
    # network filesystem's attribute cache): the sync must skip "a", not generate it again.
    from secretsapi.service.sync import sync
    from secretsapi.service.workspace import Workspace
    from tests.factories import definition, file_secret

    monkeypatch.setattr(lockfile_io, "_SETTLED_NS", 0)
    (tmp_path / "Secretfile.yml").write_text(json.dumps(definition(file_secret("a", "out/app.env"))))
    ws = Workspace(tmp_path / "Secretfile.yml")
    lock = ws.lockfile_path
    assert sync(ws).secrets_generated == ["a"]
    committed, target = lock.read_bytes(), (tmp_path / "out/app.env").read_bytes()
    _write(lock, {"version": "1.0", "secrets": {}, "metadata": {}})  # what this process last saw
    lockfile_io._cache.clear()
    read_lockfile(lock)
    stale = os.stat(lock)
    lock.write_bytes(committed)  # the other writer's commit
    real_stat = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        return stale if Path(path) == lock else real_stat(path, *args, **kwargs)

    monkeypatch.setattr("os.stat", stat)
    result = sync(ws)
    assert (result.secrets_generated, result.secrets_skipped) == ([], ["a"])
    assert (tmp_path / "out/app.env").read_bytes() == target
