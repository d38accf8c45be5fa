"""Generators: every kind and option, static validation, scripts and the catalogue."""

from __future__ import annotations

import string
import sys
import uuid
from typing import Any

import pytest

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import GeneratorError
from secretsapi.service.generators import CHARSETS, GENERATORS, generate, validate_generator

PY = sys.executable


def gen(kind: str, allow_scripts: bool = False, **config: Any) -> str:
    return generate(GeneratorSpec(kind, config), allow_scripts=allow_scripts)


def problems(kind: str, **config: Any) -> list[str]:
    return validate_generator(GeneratorSpec(kind, config), "secrets[2]")


# -- random_password ----------------------------------------------------------------------------


def test_random_password_is_32_characters_by_default() -> None:
    assert len(gen("random_password")) == 32


def test_random_password_contains_every_enabled_class() -> None:
    for _ in range(200):  # a length of 4 leaves no room for luck
        value = gen("random_password", length=4)
        assert any(c in string.ascii_uppercase for c in value)
        assert any(c in string.ascii_lowercase for c in value)
        assert any(c in string.digits for c in value)
        assert any(c in string.punctuation for c in value)


def test_random_password_leaves_out_disabled_classes() -> None:
    value = gen("random_password", length=200, special=False, number=False)
    assert set(value) <= set(string.ascii_letters)


def test_random_password_never_uses_excluded_characters() -> None:
    excluded = "\"'`$\\"
    value = gen("random_password", length=500, exclude_characters=excluded)
    assert not set(value) & set(excluded)


def test_random_password_shorter_than_its_classes_is_an_error() -> None:
    with pytest.raises(GeneratorError, match="shorter than the 4 enabled character classes"):
        gen("random_password", length=3)


def test_random_password_with_a_class_fully_excluded_is_an_error() -> None:
    with pytest.raises(GeneratorError, match="excludes every 'number' character"):
        gen("random_password", exclude_characters=string.digits)


def test_random_password_with_every_class_disabled_is_an_error() -> None:
    with pytest.raises(GeneratorError, match="every character class is disabled"):
        gen("random_password", upper=False, lower=False, number=False, special=False)


def test_random_password_flags_must_be_booleans() -> None:
    assert problems("random_password", special="no") == ["secrets[2].config.special: must be true or false"]


# -- random_string, random_hex, uuid ----------------------------------------------------------------


def test_random_string_is_32_alphanumeric_characters_by_default() -> None:
    value = gen("random_string")
    assert len(value) == 32 and set(value) <= set(string.ascii_letters + string.digits)


@pytest.mark.parametrize("charset", sorted(CHARSETS))
def test_random_string_uses_only_its_charset(charset: str) -> None:
    value = gen("random_string", length=300, charset=charset)
    assert len(value) == 300 and set(value) <= set(CHARSETS[charset])


def test_random_string_hex_is_lowercase() -> None:
    assert set(gen("random_string", length=200, charset="hex")) <= set("0123456789abcdef")


def test_random_string_charset_that_is_no_name_is_accepted() -> None:
    assert problems("random_string", charset="abcdefghijklmnopqrstuvwxyz0123456789-_") == []


def test_random_string_charset_that_is_no_name_draws_alphanumerics_as_secretzero_does() -> None:
    value = gen("random_string", length=400, charset="-_")
    assert set(value) <= set(string.ascii_letters + string.digits)
    assert len(set(value)) > 2


def test_random_string_charset_names_accepted_before_keep_their_characters() -> None:
    assert set(gen("random_string", length=200, charset="base64url")) & set("-_")
    assert set(gen("random_string", length=50, charset="numeric")) <= set(string.digits)


def test_random_string_charset_that_is_not_text_names_the_place() -> None:
    assert problems("random_string", charset=5) == [
        "secrets[2].config.charset: must be a string, got a value of type int"
    ]


def test_random_hex_has_the_requested_number_of_lowercase_hex_characters() -> None:
    value = gen("random_hex", length=7)
    assert len(value) == 7 and set(value) <= set("0123456789abcdef")


def test_random_hex_is_32_characters_by_default() -> None:
    assert len(gen("random_hex")) == 32


def test_uuid_is_a_version_4_uuid() -> None:
    assert uuid.UUID(gen("uuid")).version == 4


def test_values_differ_between_calls() -> None:
    assert gen("random_string") != gen("random_string")


# -- length checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("length", "message"),
    [
        ("abc", "must be an integer"),
        (True, "must be an integer"),
        (1.5, "must be an integer"),
        (0, "must be greater than zero"),
        (-4, "must be greater than zero"),
        (10**9, "must be at most 65536"),
    ],
)
def test_bad_lengths_are_reported_at_the_length(length: object, message: str) -> None:
    assert problems("random_hex", length=length) == [f"secrets[2].config.length: {message}"]


def test_a_digit_string_length_is_accepted_for_environment_values() -> None:
    assert len(gen("random_hex", length="12")) == 12


# -- static -------------------------------------------------------------------------------------


def test_static_returns_its_value() -> None:
    assert gen("static", value="fixed") == "fixed"


def test_static_accepts_default_as_the_value() -> None:
    assert gen("static", default="fixed") == "fixed"


def test_static_empty_string_is_a_value() -> None:
    assert gen("static", value="") == ""


def test_static_without_a_value_is_an_error() -> None:
    with pytest.raises(GeneratorError, match="static generator needs a value"):
        gen("static")


def test_static_value_matching_the_validation_passes() -> None:
    assert gen("static", value="ab12", validation="[a-z]+[0-9]+") == "ab12"


def test_static_validation_is_anchored_at_the_start_only_as_in_secretzero() -> None:
    assert gen("static", value="ab12x", validation="[a-z]+[0-9]+") == "ab12x"
    with pytest.raises(GeneratorError):
        gen("static", value="x12", validation="[0-9]+")


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "True"), (False, "False"), (8080, "8080"), (1.5, "1.5"),
     ({"b": 2, "a": {"c": True}}, '{"a":{"c":true},"b":2}'), (["x", 1], '["x",1]')],
)
def test_static_values_that_are_not_text_are_written_as_secretzero_writes_them(value: object, text: str) -> None:
    assert problems("static", value=value) == []
    assert gen("static", value=value) == text


def test_static_default_wins_over_value_as_in_secretzero() -> None:
    assert gen("static", value="v", default="d") == "d"


def test_a_generator_that_is_unavailable_fails_with_its_reason() -> None:
    spec = GeneratorSpec("provider_backed", {},
                         unavailable="generator kind 'provider_backed' is not supported by this service")
    with pytest.raises(GeneratorError, match="provider_backed"):
        generate(spec, allow_scripts=False)


def test_static_validation_error_does_not_contain_the_value() -> None:
    with pytest.raises(GeneratorError) as caught:
        gen("static", value="hunter2secret", validation="[0-9]+")
    assert "hunter2secret" not in str(caught.value)
    assert "does not match the validation pattern" in str(caught.value)


def test_static_bad_regex_is_reported() -> None:
    assert problems("static", value="x", validation="(") == [
        "secrets[2].config.validation: not a valid regular expression"
    ]


# -- script -------------------------------------------------------------------------------------


def test_script_is_disabled_unless_allowed() -> None:
    with pytest.raises(GeneratorError) as caught:
        gen("script", command="echo hi")
    assert caught.value.message == "script generator is disabled; set SERVICE_ALLOW_SCRIPTS=true to enable it"


@pytest.mark.slow
def test_script_output_is_stripped_stdout_when_allowed() -> None:
    assert gen("script", allow_scripts=True, command=PY, args=["-c", "print('  tok  ')"]) == "tok"


@pytest.mark.slow
def test_script_command_string_is_split_like_a_shell_without_a_shell() -> None:
    assert gen("script", allow_scripts=True, command="echo one  'two three'") == "one two three"


@pytest.mark.slow
def test_script_runs_through_a_shell_only_when_asked() -> None:
    assert gen("script", allow_scripts=True, command="echo $((2+3))", shell=True) == "5"
    assert gen("script", allow_scripts=True, command="echo $((2+3))") == "$((2+3))"


@pytest.mark.slow
def test_script_shell_args_are_quoted() -> None:
    assert gen("script", allow_scripts=True, command="echo", args=["a;b"], shell=True) == "a;b"


@pytest.mark.slow
def test_script_failure_does_not_echo_its_output() -> None:
    code = "import sys; print('hunter2out'); print('hunter2err', file=sys.stderr); sys.exit(3)"
    with pytest.raises(GeneratorError, match="exited with status 3") as caught:
        gen("script", allow_scripts=True, command=PY, args=["-c", code])
    assert "hunter2" not in str(caught.value)


@pytest.mark.slow
def test_script_timeout_kills_the_command() -> None:
    with pytest.raises(GeneratorError, match=r"timed out after 0\.5 s"):
        gen("script", allow_scripts=True, command="sleep 30; echo late", shell=True, timeout=0.5)


@pytest.mark.slow
def test_script_missing_command_cannot_be_started() -> None:
    with pytest.raises(GeneratorError, match="could not be started"):
        gen("script", allow_scripts=True, command="/nonexistent/generator-binary")


@pytest.mark.slow
def test_script_with_no_output_is_an_error() -> None:
    with pytest.raises(GeneratorError, match="printed nothing"):
        gen("script", allow_scripts=True, command="true")


def test_script_options_are_type_checked() -> None:
    assert problems("script", command="x", args="nope", shell="yes", timeout=0) == [
        "secrets[2].config.args: must be a list of strings",
        "secrets[2].config.shell: must be true or false",
        "secrets[2].config.timeout: must be a positive number of seconds",
    ]


def test_script_env_must_map_names_to_text_and_is_never_echoed() -> None:
    assert problems("script", command="x", env={"OK": "s3cr3t", "not a name": "v"}) == [
        "secrets[2].config.env: must map variable names to text"
    ]
    assert problems("script", command="x", env=["A=1"]) == ["secrets[2].config.env: must map variable names to text"]
    assert problems("script", command="x", env={"A": "1", "B": 2}) == []


def test_script_without_a_command_is_reported() -> None:
    assert problems("script") == ["secrets[2].config.command: script generator needs a command"]


# -- validation and catalogue -------------------------------------------------------------------


def test_unknown_generator_kind_is_reported_at_the_kind() -> None:
    assert problems("nope")[0].startswith("secrets[2].kind: unknown generator kind 'nope' (expected one of")


def test_interpolated_values_are_not_echoed_in_messages() -> None:
    spec = GeneratorSpec("static", {"value": "from-env", "validation": "[0-9]+"})
    messages = validate_generator(spec, "s", interpolated={"s.config.value"})
    assert messages == ["s.config.value: does not match the validation pattern"]


def test_catalogue_describes_every_kind_and_option() -> None:
    assert set(GENERATORS) == {"random_password", "random_string", "random_hex", "uuid", "static", "azure_app_reg",
                               "script", "gitlab_project_token", "gitlab_group_token", "gitlab_group_service_account",
                               "azdo_pat", "github_pat"}
    for entry in GENERATORS.values():
        assert isinstance(entry["description"], str) and entry["description"]
        for option in entry["options"].values():
            assert set(option) == {"type", "default", "description"}


def test_catalogue_defaults_match_the_spec() -> None:
    password = GENERATORS["random_password"]["options"]
    assert password["length"]["default"] == 32
    assert all(password[flag]["default"] is True for flag in ("upper", "lower", "number", "special"))
    assert GENERATORS["random_string"]["options"]["charset"]["default"] == "alphanumeric"
    assert GENERATORS["script"]["options"]["timeout"]["default"] == 30


def test_azure_app_reg_writes_its_value_as_static_does() -> None:
    mapping = {"tenant_id": "t", "client_id": "c", "client_secret": "s"}
    assert generate(GeneratorSpec("azure_app_reg", {"value": mapping}), allow_scripts=False) == (
        '{"client_id":"c","client_secret":"s","tenant_id":"t"}')
    assert validate_generator(GeneratorSpec("azure_app_reg", {}), "g") == [
        "g.config.value: static generator needs a value (or default)"]
