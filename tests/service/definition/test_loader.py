"""Loading definition files: the SecretZero compat file, files on disk, variable files and the parse cache."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
import yaml

from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound, VarFileInvalid, VarFileNotFound
from secretsapi.service.loading.loader import load_definition
from secretsapi.service.validate import validate_document
from tests.factories import COMPAT, load_errors, subfolder
from tests.factories import bare_secret as secret
from tests.factories import load_document as load
from tests.factories import write_definition as write


@pytest.fixture
def compat(tmp_path: Path) -> Path:
    """A writable copy of the SecretZero-synced project; the shared folder is never touched."""
    target = tmp_path / "compat"
    shutil.copytree(COMPAT, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target / "Secretfile.yml"


# -- the SecretZero compat file ------------------------------------------------------------------


def test_compat_secretfile_loads_its_four_secrets(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert [s.name for s in definition.secrets] == [
        "db_password",
        "api_key",
        "session_secret",
        "bootstrap_token",
    ]


def test_compat_target_paths_are_interpolated(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    paths = [t.config["path"] for s in definition.secrets for t in s.targets]
    assert paths == [
        "out/dev.env",
        "out/dev.json",
        "out/dev.env",
        "out/dev.yaml",
        "out/dev.tfvars",
        "out/dev.env",
    ]


def test_compat_rotation_periods_become_days(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert [s.rotation_days for s in definition.secrets] == [90, 30, 365, None]


def test_compat_bootstrap_token_is_one_time_and_others_are_not(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert {s.name: s.one_time for s in definition.secrets} == {
        "db_password": False,
        "api_key": False,
        "session_secret": False,
        "bootstrap_token": True,
    }


def test_compat_hashes_match_the_secretzero_lockfile(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    lock = json.loads((compat.parent / ".gitsecrets.lock").read_text())
    assert definition.text_hash == lock["secretfile"]["hash"]
    assert definition.variables_hash == lock["secretfile"]["variables_hash"]
    assert definition.variables_hash == "d1fcf1604ac83ff5c0f045dba8098ba8a01b10b00d1ea557e06a9c78de50dba9"


def test_compat_placements_use_the_secret_name_unless_a_key_is_set(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert [p.key for p in definition.secret("db_password").units[0].placements] == [
        "db_password",
        "db_password",
    ]
    assert [p.key for p in definition.secret("bootstrap_token").units[0].placements] == ["BOOTSTRAP_TOKEN"]


def test_compat_policies_and_metadata_are_parsed(compat: Path) -> None:
    definition = load_definition(compat, environ={})
    assert definition.policies["rotation_max"].options == {"require_rotation_period": True, "max_age": "180d"}
    assert definition.policies["no_ssm"].kind == "access"
    assert definition.policies["no_ssm"].severity == "error"
    assert definition.metadata["compliance"] == ["soc2"]
    assert definition.version == "1.0"
    assert definition.warnings == ()


def test_compat_secretfile_is_valid_for_config_validate(compat: Path) -> None:
    report = validate_document(yaml.safe_load(compat.read_text()), environ={})
    assert report.valid
    assert report.errors == []
    assert report.warnings == ["secrets[3] 'bootstrap_token': no rotation_period defined"]


# -- files ----------------------------------------------------------------------------------------


def test_missing_file_is_not_found_and_named(tmp_path: Path) -> None:
    with pytest.raises(DefinitionNotFound, match=r"definition file not found: .*nope\.yml"):
        load_definition(tmp_path / "nope.yml")


def test_a_folder_is_not_a_definition_file(tmp_path: Path) -> None:
    with pytest.raises(DefinitionNotFound):
        load_definition(tmp_path)


def test_broken_yaml_is_invalid_and_names_the_file(tmp_path: Path) -> None:
    assert load_errors(tmp_path, "secrets:\n  - name: a\n   kind: x\n")[0].startswith(
        "Secretfile.yml: invalid YAML at line 3"
    )


def test_non_utf8_file_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "Secretfile.yml"
    path.write_bytes(b"secrets: [\xff]\n")
    with pytest.raises(DefinitionInvalid, match="not valid UTF-8"):
        load_definition(path)


def test_crlf_files_hash_like_their_lf_text(tmp_path: Path) -> None:
    crlf = load(tmp_path, "version: '1'\r\nsecrets: []\r\n")
    assert crlf.text_hash == load(subfolder(tmp_path), "version: '1'\nsecrets: []\n").text_hash


def test_load_definition_does_not_require_version_or_secrets(tmp_path: Path) -> None:
    definition = load(tmp_path, {"metadata": {"project": "x"}})
    assert definition.version is None
    assert definition.secrets == ()


# -- variable files -------------------------------------------------------------------------------


def test_var_files_merge_over_variables_in_order_then_the_variables_argument(tmp_path: Path) -> None:
    (tmp_path / "a.szvar").write_text("env: a\nregion: eu\ndb: {host: a, port: 1}\n")
    (tmp_path / "b.szvar").write_text("env: b\ndb: {port: 2}\n")
    doc = {"variables": {"env": "base", "app": "shop", "db": {"host": "base"}}}
    definition = load(tmp_path, doc, var_files=["a.szvar", "b.szvar"], variables={"region": "us"})
    assert definition.variables == {"env": "b", "app": "shop", "db": {"host": "a", "port": 2}, "region": "us"}
    assert definition.var_files == ("a.szvar", "b.szvar")


def test_var_file_escaping_the_folder_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (tmp_path / "x.szvar").write_text("a: 1\n")
    with pytest.raises(VarFileInvalid):
        load(project, {"secrets": []}, var_files=["../x.szvar"])


def test_missing_var_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(VarFileNotFound):
        load(tmp_path, {"secrets": []}, var_files=["nope.szvar"])


# -- cache --------------------------------------------------------------------------------------


def test_unchanged_file_returns_the_cached_object(compat: Path) -> None:
    assert load_definition(compat, environ={}) is load_definition(compat, environ={})


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    path = write(tmp_path, {"secrets": [secret(name="a")]})
    first = load_definition(path, environ={})
    write(tmp_path, {"secrets": [secret(name="bb")]})
    second = load_definition(path, environ={})
    assert second is not first
    assert second.secrets[0].name == "bb"


def test_a_touched_file_with_the_same_size_is_parsed_again(tmp_path: Path) -> None:
    path = write(tmp_path, {"secrets": [secret(name="a")]})
    first = load_definition(path, environ={})
    write(tmp_path, {"secrets": [secret(name="b")]})
    os.utime(path, ns=(1, 1))  # force a different mtime even on coarse clocks
    assert load_definition(path, environ={}).secrets[0].name == "b"
    assert first.secrets[0].name == "a"


def test_a_changed_var_file_invalidates_the_cache(tmp_path: Path) -> None:
    (tmp_path / "v.szvar").write_text("env: a\n")
    path = write(tmp_path, {"secrets": []})
    first = load_definition(path, var_files=["v.szvar"], environ={})
    (tmp_path / "v.szvar").write_text("env: bb\n")
    second = load_definition(path, var_files=["v.szvar"], environ={})
    assert second is not first
    assert second.variables == {"env": "bb"}


def test_different_variables_or_environment_are_cached_apart(compat: Path) -> None:
    base = load_definition(compat, environ={})
    assert load_definition(compat, environ={}, variables={"env": "prod"}) is not base
    assert load_definition(compat, environ={"X": "1"}) is not base
    assert (
        load_definition(compat, environ={}, variables={"env": "prod"}).secrets[0].targets[0].config["path"]
        == "out/prod.env"
    )


def test_the_cache_is_bounded(tmp_path: Path) -> None:
    path = write(tmp_path, {"secrets": []})
    first = load_definition(path, environ={})
    for index in range(40):
        load_definition(path, environ={"N": str(index)})
    assert load_definition(path, environ={}) is not first
