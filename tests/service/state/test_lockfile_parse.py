"""Parsing the lockfile: errors naming the place, another writer's file read whole, and one parse
shared by the threads that find the same new file."""

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


def entry(i: int, **extra: Any) -> dict[str, Any]:
    return {"hash": H, "created_at": "2026-01-01T00:00:00+00:00", "rotation_count": i,
            "targets": {f"local/file/out/f{i % 3}.env": H}, **extra}


def document(count: int = 60, **extra_entry: Any) -> dict[str, Any]:
    return {"version": "1.0", "secrets": {f"s{i:03d}": entry(i, **extra_entry) for i in range(count)},
            "secretfile": {"filename": "Secretfile.yml", "var_files": []}, "metadata": {"note": "},{"}}


WRITTEN = "".join(LockDocument(document()).chunks())
INVALID = {
    "truncated": WRITTEN[:-300],
    "a trailing comma in secrets": WRITTEN.replace('}\n  },\n  "secretfile"', '},\n  },\n  "secretfile"'),
    "extra data": json.dumps(document(), separators=(",", ":")) + "{}",
    "a bad value in the middle": json.dumps(document(), separators=(",", ":")).replace('"s030":{', '"s030":{x'),
}


@pytest.mark.parametrize("text", list(INVALID.values()), ids=list(INVALID))
def test_an_invalid_lockfile_is_unreadable_naming_the_place(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".gitsecrets.lock"
    path.write_text(text)
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
    path.write_text(WRITTEN)
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


def test_a_lockfile_holding_an_integer_past_python_s_digit_limit_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / ".gitsecrets.lock"
    path.write_text(WRITTEN.replace('"rotation_count": 7', '"rotation_count": ' + "7" * 5000, 1))
    with pytest.raises(LockfileUnreadable, match="holds a number too large to be read"):
        read_lockfile(path)
