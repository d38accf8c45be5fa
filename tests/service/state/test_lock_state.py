"""Local secrets: their state in SecretZero's machine-local lockfile, beside the shared one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.policy import check_policies
from secretsapi.service.rotation import check_rotation, execute_rotation
from secretsapi.service.state import lockfile_io
from secretsapi.service.status import secret_status
from secretsapi.service.sync import sync
from secretsapi.service.value_read import read_value
from secretsapi.service.workspace import Workspace
from tests.factories import definition, file_secret, load_errors, write_definition


def _ws(folder: Path, *secrets: dict[str, Any]) -> Workspace:
    doc = definition(*(secrets or (file_secret("shared"), file_secret("mine", "out/me.env", local=True))))
    return Workspace(definition_path=write_definition(folder, doc), lock_timeout=10, environ={})


def _secrets(path: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(path.read_text())["secrets"]
    return found


def test_a_local_secret_is_recorded_in_the_local_lockfile_only(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    sync(ws)
    assert set(_secrets(ws.lockfile_path)) == {"shared"}
    assert set(_secrets(tmp_path / ".gitsecrets.local.lock")) == {"mine"}


def test_the_local_lockfile_gets_no_secretfile_block(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    sync(ws)
    assert "secretfile" not in json.loads(ws.local_lockfile_path.read_text())
    assert "secretfile" in json.loads(ws.lockfile_path.read_text())


def test_every_operation_reads_a_local_secret_from_the_local_lockfile(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    sync(ws)
    assert sync(ws).secrets_skipped == ["shared", "mine"]
    assert secret_status(ws, "mine").exists is True
    assert detect_drift(ws).has_drift is False
    assert "not generated" not in {r.name: r.status for r in check_rotation(ws).results}["mine"]
    assert read_value(ws, "mine").verified is True
    assert check_policies(ws).errors == []
    (tmp_path / "out/me.env").write_text("mine=other\n")
    assert sync(ws, repair=True).errors[0].secret == "mine"  # the repair read the local entry


def test_a_rotation_of_a_local_secret_writes_the_local_lockfile(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    sync(ws)
    shared_before = _secrets(ws.lockfile_path)
    assert execute_rotation(ws, secret_name="mine", force=True).rotated == ["mine"]
    assert _secrets(ws.local_lockfile_path)["mine"]["rotation_count"] == 1
    assert _secrets(ws.lockfile_path) == shared_before


def test_an_entry_in_the_shared_lockfile_from_before_the_flag_is_not_regenerated(tmp_path: Path) -> None:
    ws = _ws(tmp_path, file_secret("mine", "out/me.env"))
    sync(ws)
    ws = _ws(tmp_path, file_secret("mine", "out/me.env", local=True))
    assert sync(ws).secrets_skipped == ["mine"]
    assert detect_drift(ws).has_drift is False


def test_a_crash_between_the_two_writes_leaves_each_file_valid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path)
    real = lockfile_io.StagedLockfile.commit

    def local_then_crash(staged: lockfile_io.StagedLockfile) -> None:
        if staged.path == ws.lockfile_path:
            raise OSError("power cut")
        real(staged)

    monkeypatch.setattr(lockfile_io.StagedLockfile, "commit", local_then_crash)
    with pytest.raises(OSError, match="power cut"):
        sync(ws)
    monkeypatch.undo()
    assert set(_secrets(ws.local_lockfile_path)) == {"mine"}
    assert not ws.lockfile_path.exists()
    result = sync(ws)  # the shared secret's targets hold a value the lockfile never learnt: regenerated
    assert (result.secrets_generated, result.secrets_skipped) == (["shared"], ["mine"])


@pytest.mark.parametrize("flag", ["yes", "On", "1", 1, True])
def test_the_local_flag_is_read_as_secretzero_reads_it(tmp_path: Path, flag: Any) -> None:
    ws = _ws(tmp_path, file_secret("mine", local=flag))
    assert ws.definition().secret("mine").local is True


def test_a_local_secret_with_a_cloud_target_is_refused_unless_allowed(tmp_path: Path) -> None:
    cloud = {"name": "mine", "kind": "random_password", "local": True,
             "targets": [{"provider": "aws", "kind": "ssm_parameter", "config": {"name": "/x"}}]}
    errors = load_errors(tmp_path, definition(cloud))
    assert any("a local secret cannot target aws/ssm_parameter" in error for error in errors)
    assert not any("local secret" in error for error in load_errors(
        tmp_path, definition({**cloud, "local_allow_cloud": True}, {"name": "x"})
    ))
