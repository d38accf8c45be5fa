"""Atomic writes clean up after crashed writers, never follow a link, and can be staged."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from secretsapi.service.util.atomic_files import STALE_TEMP_SECONDS, LinkRefused, atomic_write_text, stage


def leftover(folder: Path, name: str, age: float) -> Path:
    temp = folder / f".{name}.abc123.tmp"
    temp.write_text("SECRET=left-by-a-crash\n")
    then = time.time() - age
    os.utime(temp, (then, then))
    return temp


def test_a_crashed_writers_old_temp_file_is_removed_by_the_next_write(tmp_path: Path) -> None:
    stale = leftover(tmp_path, "app.env", STALE_TEMP_SECONDS + 5)
    atomic_write_text(tmp_path / "app.env", "SECRET=new\n")
    assert not stale.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["app.env"]


def test_a_recent_temp_file_is_left_alone(tmp_path: Path) -> None:
    fresh = leftover(tmp_path, "app.env", 1)
    atomic_write_text(tmp_path / "app.env", "SECRET=new\n")
    assert fresh.exists()


def test_other_files_temp_files_are_not_touched(tmp_path: Path) -> None:
    other = leftover(tmp_path, "other.env", STALE_TEMP_SECONDS + 5)
    atomic_write_text(tmp_path / "app.env", "SECRET=new\n")
    assert other.exists()


def test_a_staged_file_rewritten_shorter_holds_exactly_the_last_content(tmp_path: Path) -> None:
    with stage(tmp_path / "lock.json") as staged:
        staged.write([b"x" * 5000, b"y" * 5000])
        staged.write([b"short\n"])
        staged.commit()
    assert (tmp_path / "lock.json").read_bytes() == b"short\n"
    assert [p.name for p in tmp_path.iterdir()] == ["lock.json"]


def test_a_staged_file_closed_without_a_commit_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "lock.json").write_bytes(b"old")
    with stage(tmp_path / "lock.json") as staged:
        staged.write([b"new"])
    assert [p.name for p in tmp_path.iterdir()] == ["lock.json"]
    assert (tmp_path / "lock.json").read_bytes() == b"old"


def test_a_new_file_and_its_temp_file_are_0600_and_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    with stage(tmp_path / "new.env") as staged:
        assert os.stat(tmp_path / staged.temp).st_mode & 0o777 == 0o600
        staged.write([b"A=1\n"])
        staged.commit()
    assert (tmp_path / "new.env").stat().st_mode & 0o777 == 0o600
    (tmp_path / "shared.env").write_text("A=0\n")
    (tmp_path / "shared.env").chmod(0o640)
    atomic_write_text(tmp_path / "shared.env", "A=1\n")
    assert (tmp_path / "shared.env").stat().st_mode & 0o777 == 0o640


def test_a_write_within_a_root_refuses_a_linked_folder_and_leaves_no_temp_file_behind_it(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "root" / "out").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(LinkRefused):
        atomic_write_text(tmp_path / "root" / "out" / "app.env", "A=1\n", root=tmp_path / "root")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_root_that_does_not_exist_yet_is_created_private(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "root" / "out" / "app.env", "A=1\n", root=tmp_path / "root")
    assert (tmp_path / "root" / "out" / "app.env").read_text() == "A=1\n"
    assert (tmp_path / "root").stat().st_mode & 0o777 == 0o700
