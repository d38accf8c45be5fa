"""The top-level ``environments`` block: SecretZero's lanes, parsed for the default lane's lockfile."""

from __future__ import annotations

from pathlib import Path

from tests.factories import definition, file_secret, load_document, load_errors


def test_environments_are_parsed_and_not_called_an_unknown_key(tmp_path: Path) -> None:
    lanes = {"default": "dev", "profiles": {"dev": {"var_files": ["dev.szvar"], "lockfile": "dev.lock",
                                                    "target_profile": "aws_dev"}}}
    loaded = load_document(tmp_path, definition(file_secret("s"), environments=lanes, target_profiles={"aws_dev": {}}))
    assert loaded.environments.selected is not None
    selected = loaded.environments.selected
    assert (selected.var_files, selected.lockfile, selected.target_profile) == (("dev.szvar",), "dev.lock", "aws_dev")
    assert not any("environments" in warning for warning in loaded.warnings)


def test_a_profile_lockfile_that_is_not_a_string_is_an_error(tmp_path: Path) -> None:
    lanes = {"default": "dev", "profiles": {"dev": {"lockfile": 3}}}
    errors = load_errors(tmp_path, definition(file_secret("s"), environments=lanes))
    assert errors == ["environments.profiles.dev.lockfile: must be a string"]


def test_a_profile_lockfile_is_interpolated(tmp_path: Path) -> None:
    lanes = {"default": "dev", "profiles": {"dev": {"lockfile": "{{ var.env }}.lock"}}}
    loaded = load_document(tmp_path, definition(file_secret("s"), environments=lanes, variables={"env": "qa"}))
    assert loaded.environments.selected is not None
    assert loaded.environments.selected.lockfile == "qa.lock"
