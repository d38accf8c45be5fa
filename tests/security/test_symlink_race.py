"""A target folder swapped for a symbolic link after the path check cannot redirect a write or
a read outside the allowed roots: the file and its temp files are reached through folder
descriptors, walked from the root without following links (issue 18, point 5)."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.sync import sync
from secretsapi.service.targets import files, output_file
from secretsapi.service.workspace import Workspace
from tests.factories import definition, file_secret, target, write_definition

# Left to make test (tests/tiers.py): races repeated until they would have been lost.
pytestmark = pytest.mark.thorough

SYNCS = 40
SWAPS = 20_000  # bounds the swapper; it stops earlier when the syncs are done


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """The project folder (the only allowed root) and a folder outside it the attacker owns."""
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    (project / "out").mkdir(parents=True)
    outside.mkdir()
    return project, outside


def _workspace(project: Path, *secrets: dict[str, Any]) -> Workspace:
    (project / "app.tpl").write_text("DB={{ db }}\n")
    return Workspace(definition_path=write_definition(project, definition(*secrets)), lock_timeout=10, environ={})


def _templated(name: str) -> dict[str, Any]:
    return {"name": name, "kind": "random_password",
            "targets": [target("local", "template", template_path="app.tpl", output_path="out/app.conf")]}


def _swap_after_check(monkeypatch: pytest.MonkeyPatch, module: Any, project: Path, outside: Path) -> None:
    """The path check passes on the real folder; right after it, ``out`` becomes a link outside."""
    real = module.confined_path

    def checked_then_swapped(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        if args[2] in ("path", "output_path") and not (project / "out").is_symlink():
            (project / "out").rename(project / "out.parked")
            (project / "out").symlink_to(outside, target_is_directory=True)
        return result

    monkeypatch.setattr(module, "confined_path", checked_then_swapped)


def test_a_folder_swapped_for_a_link_after_the_check_fails_the_file_target_and_writes_nothing_outside(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, outside = layout
    ws = _workspace(project, file_secret("db", "out/app.env"))
    _swap_after_check(monkeypatch, files, project, outside)
    result = sync(ws)
    assert result.secrets_failed == ["db"]
    assert "symbolic link" in result.errors[0].message
    assert list(outside.iterdir()) == []


def test_a_folder_swapped_for_a_link_after_the_check_fails_the_template_target_and_writes_nothing_outside(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, outside = layout
    ws = _workspace(project, _templated("db"))
    _swap_after_check(monkeypatch, output_file, project, outside)  # where a template's output path is checked
    result = sync(ws)
    assert result.secrets_failed == ["db"]
    assert "symbolic link" in result.errors[0].message
    assert list(outside.iterdir()) == []


def test_a_read_back_does_not_follow_a_folder_swapped_for_a_link_outside(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, outside = layout
    ws = _workspace(project, file_secret("db", "out/app.env"))
    sync(ws)
    # The attacker's copy holds the recorded line, so following the link would look in sync.
    shutil.copy(project / "out" / "app.env", outside / "app.env")
    _swap_after_check(monkeypatch, files, project, outside)
    report = detect_drift(ws)
    assert report.has_drift
    assert "symbolic link" in str(report)


def test_a_symlinked_folder_inside_the_root_that_points_inside_it_still_works(layout: tuple[Path, Path]) -> None:
    project, _ = layout
    (project / "real").mkdir()
    (project / "linked").symlink_to(project / "real", target_is_directory=True)
    ws = _workspace(project, file_secret("db", "linked/app.env"))
    assert sync(ws).secrets_generated == ["db"]
    assert (project / "real" / "app.env").is_file()
    assert (project / "linked").is_symlink()


def test_folders_the_write_creates_are_private(layout: tuple[Path, Path]) -> None:
    project, _ = layout
    ws = _workspace(project, file_secret("db", "deep/er/app.env"))
    sync(ws)
    assert (project / "deep").stat().st_mode & 0o777 == 0o700
    assert (project / "deep" / "er").stat().st_mode & 0o777 == 0o700
    assert (project / "deep" / "er" / "app.env").stat().st_mode & 0o777 == 0o600


def _swapper(project: Path, outside: Path, done: threading.Event, seen: set[str]) -> Callable[[], None]:
    out, parked = project / "out", project / "out.parked"

    def run() -> None:
        for _ in range(SWAPS):
            if done.is_set():
                return
            with contextlib.suppress(OSError):
                out.rename(parked)
            with contextlib.suppress(OSError):
                out.symlink_to(outside, target_is_directory=True)
            seen.update(os.listdir(outside))
            with contextlib.suppress(OSError):
                out.unlink()  # the link only: unlink refuses a folder
            try:
                parked.rename(out)
            except OSError:
                # A sync made a new ``out`` while the real one was parked: keep the new one.
                shutil.rmtree(parked, ignore_errors=True)

    return run


@pytest.mark.parametrize("secret", [file_secret("db", "out/app.env"), _templated("db")], ids=["file", "template"])
def test_forced_syncs_racing_a_folder_swap_never_write_outside_the_root(
    layout: tuple[Path, Path], secret: dict[str, Any]
) -> None:
    project, outside = layout
    ws = _workspace(project, secret)
    done = threading.Event()
    seen: set[str] = set()
    swapper = threading.Thread(target=_swapper(project, outside, done, seen))
    swapper.start()
    try:
        for _ in range(SYNCS):
            sync(ws, force=True)
    finally:
        done.set()
        swapper.join(timeout=60)
    assert not swapper.is_alive()
    seen.update(os.listdir(outside))
    assert seen == set()
