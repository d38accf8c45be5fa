"""Where the workspace keeps the lockfile: SecretZero's default locations and the overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from secretsapi.service.workspace import Workspace
from tests.factories import definition, file_secret, write_definition


def _ws(folder: Path, doc: Any, name: str = "Secretfile.yml", **kwargs: Any) -> Workspace:
    return Workspace(definition_path=write_definition(folder, doc, name), environ={}, **kwargs)


def _lanes(default: str = "dev") -> dict[str, Any]:
    return {"default": default, "profiles": {"dev": {"lockfile": "locks/dev.lock"}, "prod": {"lockfile": "prod.lock"}}}


def test_a_secretfile_yml_keeps_its_lockfile_in_gitsecrets_lock(tmp_path: Path) -> None:
    assert _ws(tmp_path, definition(file_secret("s"))).lockfile_path == tmp_path / ".gitsecrets.lock"


def test_any_other_definition_file_keeps_its_lockfile_under_its_stem(tmp_path: Path) -> None:
    ws = _ws(tmp_path, definition(file_secret("s")), "api-example.yml")
    assert ws.lockfile_path == tmp_path / "api-example.lock"


def test_the_default_environment_profile_names_the_lockfile(tmp_path: Path) -> None:
    ws = _ws(tmp_path, definition(file_secret("s"), environments=_lanes()))
    assert ws.lockfile_path == tmp_path / "locks/dev.lock"


def test_an_absolute_profile_lockfile_in_the_target_roots_is_used_as_it_is(tmp_path: Path) -> None:
    lanes = {"default": "dev", "profiles": {"dev": {"lockfile": str(tmp_path / "elsewhere.lock")}}}
    (tmp_path / "sub").mkdir()
    ws = _ws(tmp_path / "sub", definition(file_secret("s"), environments=lanes), target_roots=(tmp_path,))
    assert ws.lockfile_path == tmp_path / "elsewhere.lock"


def test_profiles_without_a_default_leave_the_file_name_rule(tmp_path: Path) -> None:
    lanes = {"profiles": {"dev": {"lockfile": "dev.lock"}}}
    ws = _ws(tmp_path, definition(file_secret("s"), environments=lanes), "app.yml")
    assert ws.lockfile_path == tmp_path / "app.lock"


def test_a_default_naming_no_profile_is_a_warning_and_leaves_the_file_name_rule(tmp_path: Path) -> None:
    ws = _ws(tmp_path, definition(file_secret("s"), environments=_lanes("staging")))
    assert ws.lockfile_path == tmp_path / ".gitsecrets.lock"
    assert any("environments.default" in warning for warning in ws.definition().warnings)


def test_the_lockfile_override_wins_over_the_profile(tmp_path: Path) -> None:
    ws = _ws(tmp_path, definition(file_secret("s"), environments=_lanes()), lockfile_override=tmp_path / "x.lock")
    assert ws.lockfile_path == tmp_path / "x.lock"


def test_the_local_lockfile_sits_beside_the_shared_one(tmp_path: Path) -> None:
    ws = _ws(tmp_path, definition(file_secret("s"), environments=_lanes()))
    assert ws.local_lockfile_path == tmp_path / "locks/.gitsecrets.local.lock"


def test_an_unloadable_definition_falls_back_to_the_file_name_rule(tmp_path: Path) -> None:
    ws = _ws(tmp_path, "secrets: [", "app.yml")
    assert ws.lockfile_path == tmp_path / "app.lock"


def test_the_default_profile_var_files_apply_before_the_given_ones(tmp_path: Path) -> None:
    (tmp_path / "dev.szvar").write_text("env: dev\nregion: eu\n")
    (tmp_path / "ci.szvar").write_text("env: ci\n")
    lanes = {"default": "dev", "profiles": {"dev": {"var_files": ["dev.szvar"]}}}
    ws = _ws(tmp_path, definition(file_secret("s"), environments=lanes, variables={"env": "x", "region": "us"}),
             var_files=("ci.szvar",))
    loaded = ws.definition()
    assert (loaded.var_files, dict(loaded.variables)) == (("dev.szvar", "ci.szvar"), {"env": "ci", "region": "eu"})
