"""A large lockfile is decoded in pieces (no one call holds the interpreter lock for all of it),
with exactly json.loads' result, key order and errors, whatever the file's formatting."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.errors import LockfileUnreadable
from secretsapi.service.state import lockfile_io
from secretsapi.service.state.lockfile import LockDocument
from secretsapi.service.state.lockfile_io import read_lockfile, write_lockfile

H = "d" * 64
PIECE = 256


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lockfile_io, "_PIECE_CHARS", PIECE)


def entry(i: int, **extra: Any) -> dict[str, Any]:
    return {"hash": H, "created_at": "2026-01-01T00:00:00+00:00", "rotation_count": i,
            "targets": {f"local/file/out/f{i % 3}.env": H}, **extra}


def document(count: int = 60, **extra_entry: Any) -> dict[str, Any]:
    return {"version": "1.0", "secrets": {f"s{i:03d}": entry(i, **extra_entry) for i in range(count)},
            "secretfile": {"filename": "Secretfile.yml", "var_files": []}, "metadata": {"note": "},{"}}


TEXTS = {
    "as this service writes it": "".join(LockDocument(document()).chunks()),
    "minified: a cut after every nested object": json.dumps(document(), separators=(",", ":")),
    "a nested object inside each entry before more of it": json.dumps(
        document(metadata={"a": {"b": {"c": {}}}, "d": 1}), indent=1),
    "strings holding the cut": json.dumps(document(note='x},"y": {"z": 1},'), indent=2),
    "secrets last, unicode, escapes": json.dumps(
        {"version": "1.0", "metadata": {}, "secrets": {f"秘密{i}\\\"": entry(i, n="\u2028\n") for i in range(60)}},
        indent=4, ensure_ascii=False),
    "repeated keys across pieces and at the top": (
        '{"version": "1.0", "secrets": {' + ", ".join(f'"s{i % 7}": {json.dumps(entry(i))}' for i in range(60))
        + '}, "version": "2.0"}'),
}


@pytest.mark.parametrize("text", list(TEXTS.values()), ids=list(TEXTS))
def test_a_large_text_decodes_as_json_loads_decodes_it(text: str) -> None:
    assert len(text) > 4 * PIECE
    decoded = lockfile_io._loads(text)
    expected = json.loads(text)
    assert decoded == expected
    assert json.dumps(decoded) == json.dumps(expected)  # the same key order at every level


def test_no_decode_call_holds_more_than_a_piece_of_a_large_file(monkeypatch: pytest.MonkeyPatch) -> None:
    text = TEXTS["as this service writes it"]
    sizes: list[int] = []
    loads, raw_decode = json.loads, lockfile_io._DECODER.raw_decode

    def recording_loads(s: str, *args: Any, **kwargs: Any) -> Any:
        sizes.append(len(s))
        return loads(s, *args, **kwargs)

    def recording_raw_decode(s: str, idx: int = 0) -> Any:
        value, end = raw_decode(s, idx)
        sizes.append(end - idx)
        return value, end

    monkeypatch.setattr(json, "loads", recording_loads)
    monkeypatch.setattr(lockfile_io._DECODER, "raw_decode", recording_raw_decode)

    assert lockfile_io._loads(text) == loads(text)
    assert len(sizes) > 4 and max(sizes) < len(text) / 4


INVALID = {
    "truncated": TEXTS["as this service writes it"][:-300],
    "a trailing comma in secrets": TEXTS["as this service writes it"].replace('}\n  },\n  "secretfile"',
                                                                             '},\n  },\n  "secretfile"'),
    "extra data": TEXTS["minified: a cut after every nested object"] + "{}",
    "a bad value in the middle": TEXTS["minified: a cut after every nested object"].replace('"s030":{', '"s030":{x'),
}


@pytest.mark.parametrize("text", list(INVALID.values()), ids=list(INVALID))
def test_an_invalid_large_text_fails_with_json_loads_own_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        lockfile_io._loads(text)
    assert (got.value.msg, got.value.pos) == (expected.value.msg, expected.value.pos)


def test_an_invalid_large_lockfile_is_unreadable_naming_the_place(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    path.write_text(INVALID["a trailing comma in secrets"])
    with pytest.raises(LockfileUnreadable, match=r"line \d+ column \d+: invalid JSON"):
        read_lockfile(path)


def test_a_large_lockfile_written_then_replaced_reads_back_whole(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    write_lockfile(path, LockDocument(document(count=80)))
    path.write_text("".join(LockDocument(document(count=90)).chunks()))  # another writer's file
    assert read_lockfile(path)._raw == document(count=90)


class WatchedLock:
    """A lock that says when a second thread starts waiting for it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries = 0
        self.second = threading.Event()

    def __enter__(self) -> None:
        self.entries += 1
        if self.entries == 2:
            self.second.set()
        self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def test_threads_reading_the_same_new_file_wait_for_one_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / ".gitsecrets.lock"
    path.write_text(TEXTS["as this service writes it"])
    watched = WatchedLock()
    parses: list[int] = []
    parse = lockfile_io._parse

    def slow_parse(*args: Any) -> Any:
        parses.append(1)
        assert watched.second.wait(10), "the second reader never waited for this parse"
        return parse(*args)

    monkeypatch.setattr(lockfile_io, "_parse_lock", watched)
    monkeypatch.setattr(lockfile_io, "_parse", slow_parse)
    docs: list[LockDocument] = []
    readers = [threading.Thread(target=lambda: docs.append(read_lockfile(path))) for _ in range(2)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(20)

    assert len(parses) == 1
    assert len(docs) == 2 and docs[0]._raw is docs[1]._raw
