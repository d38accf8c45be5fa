"""Safe YAML loading: limits, alias bombs and value-free error messages."""

from __future__ import annotations

import time

import pytest

from secretsapi.service.definition.yaml_loader import load_yaml
from secretsapi.service.errors import DefinitionInvalid


def _billion_laughs(levels: int = 9) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghijk"[: levels - 1]:
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    return "\n".join(lines) + "\n"


def test_load_yaml_parses_a_mapping() -> None:
    assert load_yaml("a: 1\nb: [x, y]\n", source="f.yml") == {"a": 1, "b": ["x", "y"]}


def test_empty_text_loads_as_none() -> None:
    assert load_yaml("", source="f.yml") is None


def test_dates_stay_strings_so_values_hash_as_json() -> None:
    assert load_yaml("d: 2024-01-02\n", source="f.yml") == {"d": "2024-01-02"}


def test_a_few_aliases_are_still_allowed() -> None:
    assert load_yaml("base: &b {x: 1}\none: *b\ntwo: *b\n", source="f.yml")["two"] == {"x": 1}


def test_text_above_the_size_limit_is_refused() -> None:
    with pytest.raises(DefinitionInvalid, match=r"f\.yml: document is too large"):
        load_yaml("a: " + "x" * 200, source="f.yml", max_bytes=100)


def test_billion_laughs_is_refused_quickly() -> None:
    started = time.monotonic()
    with pytest.raises(DefinitionInvalid, match="aliases expand to more than"):
        load_yaml(_billion_laughs(), source="bomb.yml")
    assert time.monotonic() - started < 5


def test_too_many_alias_uses_are_refused() -> None:
    text = "a: &x 1\nb: [" + ", ".join(["*x"] * 10_001) + "]\n"
    with pytest.raises(DefinitionInvalid, match="too many alias uses"):
        load_yaml(text, source="f.yml")


def test_recursive_alias_is_refused() -> None:
    with pytest.raises(DefinitionInvalid, match="recursive alias"):
        load_yaml("&a [*a]\n", source="f.yml")


def test_syntax_error_names_the_source_and_the_line() -> None:
    with pytest.raises(DefinitionInvalid) as caught:
        load_yaml("a: b\nc: d\n  e: f\n", source="Secretfile.yml")
    assert caught.value.errors[0].startswith("Secretfile.yml: invalid YAML at line 3")


def test_errors_do_not_echo_document_content() -> None:
    for text in ("password: *hunter2secret\n", "password: !hunter2secret x\n"):
        with pytest.raises(DefinitionInvalid) as caught:
            load_yaml(text, source="f.yml")
        assert "hunter2secret" not in str(caught.value)


def test_more_than_one_document_is_refused() -> None:
    with pytest.raises(DefinitionInvalid, match="single document"):
        load_yaml("a: 1\n---\nb: 2\n", source="f.yml")


def test_deep_nesting_is_refused_without_a_recursion_error() -> None:
    with pytest.raises(DefinitionInvalid, match="nested too deeply"):
        load_yaml("[" * 20_000, source="f.yml")


def test_unacceptable_characters_are_refused_by_offset() -> None:
    with pytest.raises(DefinitionInvalid, match="unacceptable character at offset 3"):
        load_yaml("a: \x07", source="f.yml")
