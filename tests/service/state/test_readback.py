"""Reading a unit back keeps the copy whose hash the lockfile recorded, wherever it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from secretsapi.service.state.lockfile_io import read_lockfile
from secretsapi.service.state.readback import read_back
from secretsapi.service.sync import sync
from secretsapi.service.targets import TargetContext
from secretsapi.service.workspace import Workspace
from tests.factories import definition


def _two_files(tmp_path: Path) -> Workspace:
    targets: list[dict[str, Any]] = [
        {"provider": "local", "kind": "file", "config": {"path": f"out/{name}.env"}} for name in ("first", "second")
    ]
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition({"name": "token", "kind": "random_string", "targets": targets})))
    ws = Workspace(definition_path=path)
    assert sync(ws).secrets_generated == ["token"]
    return ws


def _read(ws: Workspace) -> Any:
    found = ws.definition()
    recorded = read_lockfile(ws.lockfile_path).entry("token")
    assert recorded is not None
    return read_back(found.secret("token").units[0], recorded.hash, TargetContext.of(found))


def test_the_recorded_copy_is_found_behind_a_target_holding_another_value(tmp_path: Path) -> None:
    ws = _two_files(tmp_path)
    value = (tmp_path / "out/second.env").read_text().split("=", 1)[1].strip()
    (tmp_path / "out/first.env").write_text("token=changed-behind-our-back\n")
    found = _read(ws)
    assert found.recorded is not None
    assert (found.recorded.target_id, found.recorded.value) == ("local/file/out/second.env", value)


def test_without_a_recorded_copy_the_first_readable_other_value_is_kept(tmp_path: Path) -> None:
    ws = _two_files(tmp_path)
    (tmp_path / "out/first.env").unlink()
    (tmp_path / "out/second.env").write_text("token=changed\n")
    found = _read(ws)
    assert found.recorded is None
    assert found.other is not None
    assert (found.other.target_id, found.other.value) == ("local/file/out/second.env", "changed")


def test_targets_that_cannot_be_read_are_reported_as_problems(tmp_path: Path) -> None:
    ws = _two_files(tmp_path)
    for name in ("first", "second"):
        (tmp_path / f"out/{name}.env").write_text("not a dotenv line\n")
    found = _read(ws)
    assert (found.recorded, found.other) == (None, None)
    assert len(found.problems) == 2


def test_a_copy_only_secretzero_reads_right_is_the_recorded_one(tmp_path: Path) -> None:
    value = "a\\nb c"  # a backslash and an n: standard readers take "\n" for a newline
    target = {"provider": "local", "kind": "file", "config": {"path": "out/app.env"}}
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(
        {"name": "token", "kind": "static", "config": {"value": value}, "targets": [target]})))
    ws = Workspace(definition_path=path)
    assert sync(ws).secrets_generated == ["token"]
    (tmp_path / "out/app.env").write_text(f'token="{value}"\n')  # as SecretZero writes it
    found = _read(ws)
    assert found.recorded is not None
    assert (found.recorded.target_id, found.recorded.value) == ("local/file/out/app.env", value)
