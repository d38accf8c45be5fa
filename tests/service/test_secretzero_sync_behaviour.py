"""Against SecretZero 0.14.23 itself: a project synced by SecretZero, then a target file
deleted and a target added, gives the same files and lockfile hashes after our sync as after
SecretZero's; a secret imported from the environment (``source: env``) too.

SecretZero runs from its own virtualenv (Python 3.12), which ``make test`` installs
(tests/secretzero_venv.py). Without one these tests skip saying why, or fail under
``TEST_REQUIRE_TOOLS=1``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests import secretzero_venv

SEED = "seeded-from-the-environment"


def _file(path: str, fmt: str = "dotenv") -> dict[str, Any]:
    return {"provider": "local", "kind": "file", "config": {"path": path, "format": fmt}}


def _definition(*db_targets: dict[str, Any]) -> dict[str, Any]:
    return {"version": "1.0", "secrets": [
        {"name": "db", "kind": "random_string", "config": {"length": 24}, "targets": list(db_targets)},
        {"name": "seeded", "kind": "random_string", "config": {"length": 24},
         "source": {"kind": "env", "config": {"name": "SEED_VALUE"}}, "targets": [_file("seed.env")]},
    ]}


def _write(folder: Path, doc: dict[str, Any]) -> None:
    (folder / "Secretfile.yml").write_text(yaml.safe_dump(doc, sort_keys=False))


def _secretzero_sync(folder: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder), "LC_ALL": "C.UTF-8",
           "SEED_VALUE": SEED}
    command = [str(secretzero_venv.require()), "--non-interactive", "sync", "-f", "Secretfile.yml"]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _our_sync(folder: Path) -> None:
    ws = Workspace(definition_path=folder / "Secretfile.yml", lock_timeout=10, environ={"SEED_VALUE": SEED})
    result = sync(ws)
    assert result.errors == [], result.errors


def _state(folder: Path) -> dict[str, Any]:
    """Each target file's text and each lockfile entry's value hash and target hashes."""
    lock = json.loads((folder / ".gitsecrets.lock").read_text())
    files = {path.name: path.read_text() for path in sorted(folder.glob("*.env")) + sorted(folder.glob("*.json"))}
    return {"files": files, "secrets": {name: (entry["hash"], entry["targets"])
                                        for name, entry in lock["secrets"].items()}}


@pytest.fixture
def projects(tmp_path: Path) -> tuple[Path, Path]:
    """The same SecretZero-synced project twice: one for SecretZero, one for us."""
    theirs, ours = tmp_path / "secretzero", tmp_path / "ours"
    theirs.mkdir()
    _write(theirs, _definition(_file("a.env"), _file("b.json", "json")))
    _secretzero_sync(theirs)
    shutil.copytree(theirs, ours)
    return theirs, ours


@pytest.mark.slow
def test_a_deleted_target_file_is_written_again_as_secretzero_writes_it(projects: tuple[Path, Path]) -> None:
    theirs, ours = projects
    before = _state(ours)
    for folder in projects:
        (folder / "a.env").unlink()
    _secretzero_sync(theirs)
    _our_sync(ours)
    assert _state(ours) == _state(theirs) == before


@pytest.mark.slow
def test_a_target_added_to_an_existing_secret_gets_its_value_as_in_secretzero(projects: tuple[Path, Path]) -> None:
    theirs, ours = projects
    for folder in projects:
        _write(folder, _definition(_file("a.env"), _file("b.json", "json"), _file("c.env")))
    _secretzero_sync(theirs)
    _our_sync(ours)
    assert "c.env" in _state(ours)["files"]
    assert _state(ours) == _state(theirs)


@pytest.mark.slow
def test_an_env_source_is_imported_and_hashed_as_secretzero_hashes_it(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "secretzero", tmp_path / "ours"
    for folder in (theirs, ours):
        folder.mkdir()
        _write(folder, _definition(_file("a.env")))
    _secretzero_sync(theirs)
    _our_sync(ours)
    assert _state(ours)["secrets"]["seeded"] == _state(theirs)["secrets"]["seeded"]
    assert _state(ours)["files"]["seed.env"] == _state(theirs)["files"]["seed.env"]
