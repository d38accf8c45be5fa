"""Variable files (found inside the definition folder, loaded in order) and deep merge."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from secretsapi.service.definition.var_files import deep_merge, load_var_files
from secretsapi.service.errors import VarFileInvalid, VarFileNotFound

# -- deep_merge -----------------------------------------------------------------------------------


def test_deep_merge_later_overlays_win() -> None:
    assert deep_merge({"a": 1, "b": 1}, {"b": 2}, {"b": 3}) == {"a": 1, "b": 3}


def test_deep_merge_merges_nested_mappings() -> None:
    assert deep_merge({"db": {"host": "h", "port": 1}}, {"db": {"port": 2}}) == {
        "db": {"host": "h", "port": 2}
    }


def test_deep_merge_a_non_mapping_replaces_a_mapping() -> None:
    assert deep_merge({"db": {"host": "h"}}, {"db": "url"}) == {"db": "url"}


def test_deep_merge_leaves_its_inputs_unchanged() -> None:
    base = {"db": {"host": "h"}}
    deep_merge(base, {"db": {"host": "other"}})
    assert base == {"db": {"host": "h"}}


# -- variable files -------------------------------------------------------------------------------


def test_var_files_load_in_the_given_order(tmp_path: Path) -> None:
    (tmp_path / "a.szvar").write_text("env: a\n")
    (tmp_path / "b.szvar").write_text("env: b\n")
    assert load_var_files(tmp_path, ["a.szvar", "b.szvar"]) == [{"env": "a"}, {"env": "b"}]


def test_var_file_in_a_subfolder_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "vars").mkdir()
    (tmp_path / "vars" / "dev.szvar").write_text("env: dev\n")
    assert load_var_files(tmp_path, ["vars/dev.szvar"]) == [{"env": "dev"}]


def test_var_file_escaping_with_dotdot_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "project"
    base.mkdir()
    (tmp_path / "outside.szvar").write_text("env: x\n")
    with pytest.raises(VarFileInvalid, match=r"'\.\./outside\.szvar' is outside the definition folder"):
        load_var_files(base, ["../outside.szvar"])


def test_var_file_with_an_absolute_path_outside_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "project"
    base.mkdir()
    outside = tmp_path / "outside.szvar"
    outside.write_text("env: x\n")
    with pytest.raises(VarFileInvalid, match="outside the definition folder"):
        load_var_files(base, [str(outside)])


def test_var_file_with_an_absolute_path_inside_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "a.szvar").write_text("env: a\n")
    assert load_var_files(tmp_path, [str(tmp_path / "a.szvar")]) == [{"env": "a"}]


def test_var_file_symlink_pointing_outside_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "project"
    base.mkdir()
    (tmp_path / "outside.szvar").write_text("env: x\n")
    os.symlink(tmp_path / "outside.szvar", base / "link.szvar")
    with pytest.raises(VarFileInvalid, match="outside the definition folder"):
        load_var_files(base, ["link.szvar"])


def test_missing_var_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(VarFileNotFound, match=r"'nope\.szvar' not found"):
        load_var_files(tmp_path, ["nope.szvar"])


def test_var_file_that_is_not_a_mapping_is_invalid_without_echoing_content(tmp_path: Path) -> None:
    (tmp_path / "list.szvar").write_text("- hunter2secret\n")
    with pytest.raises(VarFileInvalid, match=r"'list\.szvar' is not a YAML mapping") as caught:
        load_var_files(tmp_path, ["list.szvar"])
    assert "hunter2secret" not in str(caught.value)


def test_var_file_with_broken_yaml_is_invalid_and_named(tmp_path: Path) -> None:
    (tmp_path / "bad.szvar").write_text("a: b\n  c: hunter2secret\n")
    with pytest.raises(VarFileInvalid, match=r"variable file 'bad\.szvar': invalid YAML at line 2") as caught:
        load_var_files(tmp_path, ["bad.szvar"])
    assert "hunter2secret" not in str(caught.value)


def test_empty_var_file_is_an_empty_mapping(tmp_path: Path) -> None:
    (tmp_path / "empty.szvar").write_text("")
    assert load_var_files(tmp_path, ["empty.szvar"]) == [{}]
