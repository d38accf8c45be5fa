"""Interpolation of {{ var.x }} and ${NAME}."""

from __future__ import annotations

import pytest

from secretsapi.service.definition.interpolation import Interpolator, interpolate
from secretsapi.service.errors import DefinitionInvalid


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


@pytest.mark.parametrize(
    ("expression", "expected"),
    [("{{ var.names | map('upper') | join(',') }}", "A,B"),
     ("{{ var.names | select('ne', 'a') | list }}", ["b"]),
     ("{{ 'on' if var.debug is true else 'off' }}", "on"),
     ("{{ var.port is integer }}", True),
     ("{{ var.names | count }}", 2)],
)
def test_jinja_filters_and_tests_secretzero_definitions_use_work(expression: str, expected: object) -> None:
    assert render(expression, {"names": ["a", "b"], "debug": True, "port": 5432}) == expected


@pytest.mark.parametrize("expression", ["{{ 'x' | center(1000000000) }}", "{{ '%999999999s' | format('x') }}"])
def test_filters_that_a_number_can_make_huge_stay_refused(expression: str) -> None:
    assert errors_of(expression) == ["x: invalid template expression"]


def test_a_variable_named_like_a_dict_method_is_the_variable() -> None:
    assert render("{{ var.items }}", {"items": "mine"}) == "mine"


def test_interpolation_reaches_nested_values_but_not_keys() -> None:
    value = {"{{ var.k }}": ["a-{{ var.k }}", {"deep": "{{ var.k }}"}], "n": 3}
    assert render(value, {"k": "v"}) == {"{{ var.k }}": ["a-v", {"deep": "v"}], "n": 3}


def test_an_undefined_variable_is_left_as_written_and_named_at_its_place_for_the_checker() -> None:
    interpolator = Interpolator({}, {})
    rendered = interpolator.render({"path": "out/{{ var.env }}.env"}, "secrets[0].targets[1].config")
    assert rendered == {"path": "out/{{ var.env }}.env"}
    assert interpolator.errors == []
    assert interpolator.unresolved == {"secrets[0].targets[1].config.path": "undefined variable 'env'"}


def test_an_undefined_shell_variable_is_left_as_written_as_secretzero_does() -> None:
    interpolator = Interpolator({}, {})
    assert interpolator.render("${GITHUB_TOKEN}", "providers.github.auth.config.token") == "${GITHUB_TOKEN}"
    assert interpolator.unresolved == {"providers.github.auth.config.token": "undefined variable 'GITHUB_TOKEN'"}


def test_or_gives_its_right_side_for_an_undefined_variable() -> None:
    assert render("{{ var.region or 'eu-west-1' }}") == "eu-west-1"


def test_or_gives_the_variable_when_it_is_defined() -> None:
    assert render("{{ var.region or 'eu-west-1' }}", {"region": "us-east-1"}) == "us-east-1"


def test_agent_instructions_are_never_rendered() -> None:
    interpolator = Interpolator({}, {})
    value = {"agent_instructions": {"steps": ["open {{ secret_name }} with ${DEVICE_CODE}"]}, "kind": "static"}
    assert interpolator.render(value, "secrets[0]") == value
    assert interpolator.unresolved == {}
    assert interpolator.errors == []


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


def test_ordinary_string_building_still_works_within_the_limits() -> None:
    expr = (
        "{{ var.a ~ '-' ~ var.b }} {{ var.a + var.b }} {{ [var.a, var.b] | join(',') }} "
        "{{ var.a | replace('l', 'L') }} {{ '%s:%05d' % (var.a, 42) }} {{ '{}/{}'.format(var.a, var.b) }} "
        "{{ var.b.ljust(4, '.') }} {{ var.a.upper().split('L') | join('+') }}"
    )
    assert render(expr, {"a": "pool", "b": "db"}) == (
        "pool-db pooldb pool,db pooL pool:00042 pool/db db.. POO+"
    )


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
    interpolator = Interpolator(chain, {})
    interpolator.render("{{ var.v0 }}", "secrets[0].config.path")
    assert interpolator.errors == []
    assert interpolator.unresolved == {
        "secrets[0].config.path": "variable 'v30' uses an undefined variable 'nope'"
    }


def test_an_undefined_variable_inside_a_variable_is_named_where_the_variable_is_used() -> None:
    interpolator = Interpolator({"a": "{{ var.nope }}"}, {})
    interpolator.render("{{ var.a }}", "secrets[0].config.path")
    assert interpolator.errors == []
    assert interpolator.unresolved == {"secrets[0].config.path": "variable 'a' uses an undefined variable 'nope'"}


def test_a_variable_using_an_undefined_name_keeps_its_text_when_nothing_uses_it() -> None:
    interpolator = Interpolator({"token": "${GITHUB_TOKEN}"}, {})
    assert interpolator.variables == {"token": "${GITHUB_TOKEN}"}
    assert interpolator.errors == []
