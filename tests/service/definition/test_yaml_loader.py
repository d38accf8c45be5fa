"""Safe YAML loading (limits, alias bombs, value-free error messages) and bounded file reads."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.yaml_loader import load_yaml, read_text
from secretsapi.service.errors import DefinitionInvalid
from tests.factories import bare_secret as secret
from tests.factories import write_definition as write


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


# -- reading files -----------------------------------------------------------------------------


class _Reads:
    """A file whose reads are recorded; ``grow`` is appended to the file before the first one."""

    def __init__(self, handle: Any, asked: list[int], grow: bytes) -> None:
        self.handle, self.asked, self.grow = handle, asked, grow

    def __enter__(self) -> _Reads:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def fileno(self) -> int:
        return int(self.handle.fileno())

    def read(self, size: int = -1) -> bytes:
        if self.grow:
            with open(self.handle.name, "ab") as more:
                more.write(self.grow)
            self.grow = b""
        self.asked.append(size)
        data: bytes = self.handle.read(size)
        return data


def _record_reads(monkeypatch: pytest.MonkeyPatch, grow: bytes = b"") -> list[int]:
    asked: list[int] = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, mode="r", *a, **k: _Reads(real_open(self, mode), asked, grow))
    return asked


def test_a_definition_read_asks_for_the_file_size_not_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, {"version": "1", "secrets": [secret()]})
    asked = _record_reads(monkeypatch)
    assert read_text(path, source="x", max_bytes=1 << 30).startswith("version:")
    assert asked == [path.stat().st_size + 1]


def test_a_file_that_grows_while_read_is_read_whole_within_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "version: '1'\n")
    _record_reads(monkeypatch, grow=b"# " + b"x" * 100 + b"\n")
    assert read_text(path, source="x", max_bytes=1000) == "version: '1'\n# " + "x" * 100 + "\n"


def test_a_file_that_grows_past_the_limit_while_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "version: '1'\n")
    _record_reads(monkeypatch, grow=b"# " + b"x" * 2000 + b"\n")
    with pytest.raises(DefinitionInvalid, match="too large"):
        read_text(path, source="x", max_bytes=1000)
