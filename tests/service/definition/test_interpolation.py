"""Interpolation of {{ var.x }} and ${NAME}, variable files and deep merge."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from secretsapi.service.definition.interpolation import Interpolator, deep_merge, interpolate, load_var_files
from secretsapi.service.errors import DefinitionInvalid, VarFileInvalid, VarFileNotFound


def render(
    value: object, variables: dict[str, object] | None = None, environ: dict[str, str] | None = None
) -> object:
    return interpolate(value, variables=variables or {}, environ=environ or {}, where="x")


def errors_of(
    value: object, variables: dict[str, object] | None = None, environ: dict[str, str] | None = None
) -> list[str]:
    with pytest.raises(DefinitionInvalid) as caught:
        render(value, variables, environ)
    return caught.value.errors


# -- {{ var.x }} -------------------------------------------------------------------------------


def test_expression_inside_text_renders_as_text() -> None:
    assert render("out/{{ var.env }}.env", {"env": "dev"}) == "out/dev.env"


def test_a_string_that_is_one_expression_keeps_the_variable_type() -> None:
    assert render("{{ var.len }}", {"len": 16}) == 16


def test_a_single_expression_can_compute() -> None:
    assert render("{{ var.len * 2 }}", {"len": 16}) == 32


def test_nested_variables_are_reached_by_dotted_path() -> None:
    assert render("{{ var.db.host }}:{{ var.db.port }}", {"db": {"host": "h", "port": 5432}}) == "h:5432"


def test_a_mapping_variable_comes_back_as_a_plain_dict() -> None:
    assert render("{{ var.db }}", {"db": {"host": "h"}}) == {"host": "h"}


def test_filters_work() -> None:
    assert render("{{ var.env | upper }}", {"env": "dev"}) == "DEV"


def test_a_variable_named_like_a_dict_method_is_the_variable() -> None:
    assert render("{{ var.items }}", {"items": "mine"}) == "mine"


def test_interpolation_reaches_nested_values_but_not_keys() -> None:
    value = {"{{ var.k }}": ["a-{{ var.k }}", {"deep": "{{ var.k }}"}], "n": 3}
    assert render(value, {"k": "v"}) == {"{{ var.k }}": ["a-v", {"deep": "v"}], "n": 3}


def test_undefined_variable_error_names_the_variable_and_the_place() -> None:
    interpolator = Interpolator({}, {})
    interpolator.render({"path": "out/{{ var.env }}.env"}, "secrets[0].targets[1].config")
    assert interpolator.errors == ["secrets[0].targets[1].config.path: undefined variable 'env'"]


def test_undefined_nested_variable_is_named_by_its_full_path() -> None:
    assert errors_of("{{ var.db.nope }}", {"db": {"host": "h"}}) == ["x: undefined variable 'db.nope'"]


def test_a_name_without_var_prefix_is_undefined() -> None:
    assert errors_of("{{ env }}", {"env": "dev"}) == ["x: undefined variable 'env'"]


def test_the_default_filter_handles_an_undefined_variable() -> None:
    assert render("{{ var.nope | default('d') }}") == "d"


def test_the_sandbox_refuses_internal_attributes() -> None:
    assert errors_of("{{ var.s.__class__.__mro__ }}", {"s": "text"}) == [
        "x: expression is not allowed in the sandbox"
    ]


def test_syntax_errors_do_not_echo_the_string() -> None:
    errors = errors_of("hunter2-{{ var.x ! }}", {"x": 1})
    assert errors == ["x: invalid template expression"]


def test_only_var_is_visible_to_expressions() -> None:
    assert errors_of("{{ range(3) }}") == ["x: undefined variable 'range'"]


@pytest.mark.parametrize(
    "expr",
    [
        "{{ 'a' * 10**9 }}",
        "{{ [1] * 10**6 }}",
        "{{ 10 ** 100000 }}",
        "{{ ((10**64)**64)**64 }}",
        "{{ 'x' | center(10**9) }}",
        "{{ 'x' * 60000 | replace('x', 'yyyyyyyyyy') }}",
    ],
)
def test_expressions_cannot_build_huge_values(expr: str) -> None:
    assert len(errors_of(expr)) == 1


def test_ordinary_arithmetic_still_works() -> None:
    assert render("{{ var.n * 4 }}-{{ var.n ** 2 }}-{{ 'ab' * 2 }}", {"n": 3}) == "12-9-abab"


# -- ${NAME} ------------------------------------------------------------------------------------


def test_dollar_name_reads_the_merged_variables_first() -> None:
    assert render("${env}", {"env": "dev"}, {"env": "prod"}) == "dev"


def test_dollar_name_falls_back_to_the_environment() -> None:
    assert render("home=${HOME}", {}, {"HOME": "/root"}) == "home=/root"


def test_dollar_name_default_applies_when_unset() -> None:
    assert render("${PORT:-8080}") == "8080"


def test_dollar_name_default_applies_when_empty() -> None:
    assert render("${PORT:-8080}", {}, {"PORT": ""}) == "8080"


def test_dollar_name_alone_keeps_the_variable_type() -> None:
    assert render("${len}", {"len": 16}) == 16


def test_undefined_dollar_name_is_an_error_naming_it() -> None:
    assert errors_of("${NOPE}") == ["x: undefined variable 'NOPE'"]


def test_environ_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SZ_TEST_ONLY_VAR", "from-env")
    assert interpolate("${SZ_TEST_ONLY_VAR}", variables={}) == "from-env"


def test_substituted_text_is_never_interpreted_again() -> None:
    assert render("${RAW}", {"x": "no"}, {"RAW": "{{ var.x }}"}) == "{{ var.x }}"


# -- variables referencing variables -----------------------------------------------------------


def test_variables_may_reference_other_variables() -> None:
    interpolator = Interpolator({"app": "shop", "env": "dev", "name": "{{ var.app }}-${env}"}, {})
    assert interpolator.variables["name"] == "shop-dev"
    assert interpolator.render("{{ var.name }}", "x") == "shop-dev"


def test_variable_references_resolve_through_several_levels_keeping_types() -> None:
    interpolator = Interpolator({"a": "{{ var.b }}", "b": "{{ var.c }}", "c": 7}, {})
    assert interpolator.variables == {"a": 7, "b": 7, "c": 7}


def test_a_variable_cycle_is_an_error_naming_the_cycle() -> None:
    interpolator = Interpolator({"a": "{{ var.b }}", "b": "x-{{ var.a }}"}, {})
    assert interpolator.errors == ["variables.a: variable cycle a -> b -> a"]


def test_a_self_reference_is_a_cycle() -> None:
    assert Interpolator({"a": "${a}"}, {}).errors == ["variables.a: variable cycle a -> a"]


def test_very_deep_variable_chains_are_refused_with_a_clear_message() -> None:
    chain: dict[str, object] = {f"v{i}": f"{{{{ var.v{i + 1} }}}}" for i in range(60)}
    chain["v60"] = 1
    errors = Interpolator(chain, {}).errors
    assert errors == ["variables.v40: variables reference each other more than 40 levels deep"]


def test_a_broken_chain_of_variables_is_reported_once_at_its_root() -> None:
    chain: dict[str, object] = {f"v{i}": f"{{{{ var.v{i + 1} }}}}" for i in range(30)}
    chain["v30"] = "{{ var.nope }}"
    assert Interpolator(chain, {}).errors == ["variables.v30: undefined variable 'nope'"]


def test_an_undefined_variable_inside_a_variable_is_reported_once_at_the_variable() -> None:
    interpolator = Interpolator({"a": "{{ var.nope }}"}, {})
    interpolator.render("{{ var.a }}", "secrets[0].config.path")
    assert interpolator.errors == ["variables.a: undefined variable 'nope'"]


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
    with pytest.raises(VarFileNotFound, match="'nope.szvar' not found"):
        load_var_files(tmp_path, ["nope.szvar"])


def test_var_file_that_is_not_a_mapping_is_invalid_without_echoing_content(tmp_path: Path) -> None:
    (tmp_path / "list.szvar").write_text("- hunter2secret\n")
    with pytest.raises(VarFileInvalid, match="'list.szvar' is not a YAML mapping") as caught:
        load_var_files(tmp_path, ["list.szvar"])
    assert "hunter2secret" not in str(caught.value)


def test_var_file_with_broken_yaml_is_invalid_and_named(tmp_path: Path) -> None:
    (tmp_path / "bad.szvar").write_text("a: b\n  c: hunter2secret\n")
    with pytest.raises(VarFileInvalid, match="variable file 'bad.szvar': invalid YAML at line 2") as caught:
        load_var_files(tmp_path, ["bad.szvar"])
    assert "hunter2secret" not in str(caught.value)


def test_empty_var_file_is_an_empty_mapping(tmp_path: Path) -> None:
    (tmp_path / "empty.szvar").write_text("")
    assert load_var_files(tmp_path, ["empty.szvar"]) == [{}]
