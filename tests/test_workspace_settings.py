"""workspaces.workspace(): built once per settings, yet always the files the settings name now."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from secretsapi.actions import workspaces


@pytest.fixture
def configured(settings: Any) -> Any:
    settings.SERVICE_LOCKFILE = None
    return settings


def test_a_changed_definition_setting_is_followed(configured: Any, tmp_path: Path) -> None:
    configured.SERVICE_CONFIG = tmp_path / "a.yml"
    assert workspaces.workspace().definition_path == tmp_path / "a.yml"
    configured.SERVICE_CONFIG = tmp_path / "b.yml"
    assert workspaces.workspace().definition_path == tmp_path / "b.yml"


def test_a_relative_definition_is_resolved_in_the_current_folder(
    configured: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured.SERVICE_CONFIG = Path("Secretfile.yml")
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    assert workspaces.workspace().definition_path == tmp_path / "one" / "Secretfile.yml"
    monkeypatch.chdir(tmp_path / "two")
    assert workspaces.workspace().definition_path == tmp_path / "two" / "Secretfile.yml"


def test_a_lockfile_argument_overrides_the_setting_and_is_made_absolute(
    configured: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured.SERVICE_CONFIG = tmp_path / "Secretfile.yml"
    configured.SERVICE_LOCKFILE = tmp_path / "configured.lock"
    monkeypatch.chdir(tmp_path)
    assert workspaces.workspace(lockfile=Path("cli.lock")).lockfile_path == tmp_path / "cli.lock"
    assert workspaces.workspace().lockfile_path == tmp_path / "configured.lock"


def test_changed_engine_settings_reach_the_workspace(configured: Any, tmp_path: Path) -> None:
    configured.SERVICE_CONFIG = tmp_path / "Secretfile.yml"
    configured.SERVICE_ALLOW_SCRIPTS = False
    configured.SERVICE_MAX_DEFINITION_BYTES = 1000
    before = workspaces.workspace()
    configured.SERVICE_ALLOW_SCRIPTS = True
    configured.SERVICE_MAX_DEFINITION_BYTES = 2000
    after = workspaces.workspace(var_files=["vars.yml"])
    assert (before.allow_scripts, before.max_definition_bytes, before.var_files) == (False, 1000, ())
    assert (after.allow_scripts, after.max_definition_bytes, after.var_files) == (True, 2000, ("vars.yml",))


def test_changed_target_roots_reach_the_workspace_and_none_means_the_definition_folder(
        configured: Any, tmp_path: Path) -> None:
    configured.SERVICE_CONFIG = tmp_path / "Secretfile.yml"
    configured.SERVICE_TARGET_ROOTS = ()
    assert workspaces.workspace().target_roots is None
    configured.SERVICE_TARGET_ROOTS = (Path("/srv/app"),)
    assert workspaces.workspace().target_roots == (Path("/srv/app"),)


def test_absolute_settings_work_in_a_removed_working_folder(
    configured: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured.SERVICE_CONFIG = tmp_path / "Secretfile.yml"
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert workspaces.workspace().definition_path == tmp_path / "Secretfile.yml"
