"""Atomic writes clean up after crashed writers."""

from __future__ import annotations

import os
import time
from pathlib import Path

from secretsapi.service.util.atomic_files import STALE_TEMP_SECONDS, atomic_write_text


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
