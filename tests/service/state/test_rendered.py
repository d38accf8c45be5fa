"""``state.rendered``: which units a template output is placed in, under which id, and when it is current."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from secretsapi.service.definition.model import Definition, Placement, TargetSpec
from secretsapi.service.loading.loader import load_definition
from secretsapi.service.state.lockfile import LockEntry, parse_time
from secretsapi.service.state.rendered import (
    CHANGED,
    CURRENT,
    STALE,
    UNRECORDED,
    UNTRACKED,
    Member,
    classify,
    with_rendered,
)
from secretsapi.service.targets import TargetContext, get_kind
from tests.factories import definition, file_secret, write_definition

T1 = "2026-01-01T00:00:00+00:00"
T2 = "2026-01-02T00:00:00+00:00"
T3 = "2026-01-03T00:00:00+00:00"


def _template(output: str = "out/app.conf", template: str = "app.j2", **config: Any) -> dict[str, Any]:
    return {"provider": "local", "kind": "template",
            "config": {"template_path": template, "output_path": output, **config}}


def _load(folder: Path, *secrets: dict[str, Any]) -> Definition:
    return load_definition(write_definition(folder, definition(*secrets)), environ={})


def _placed(found: Definition, name: str) -> list[tuple[str, bool]]:
    """The unit's template target ids, each with whether it is rendered (not declared)."""
    ctx = TargetContext.of(found)
    return [(get_kind(p.target.type).target_id(p.target, ctx), p.rendered)
            for p in found.secret(name).units[0].placements if p.target.type == "local/template"]


def test_a_template_is_placed_in_each_unit_it_renders_beside_those_that_declare_it(tmp_path: Path) -> None:
    (tmp_path / "app.j2").write_text("{{ a }} {{ secrets.b }}")
    found = with_rendered(_load(tmp_path, {**file_secret("a"), "targets": [_template()]}, file_secret("b"),
                                file_secret("c")))
    assert (_placed(found, "a"), _placed(found, "b"), _placed(found, "c")) == (
        [("local/template/", False)], [("local/template/", True)], [])
    assert found.secret("b") is found.secrets[1]


def test_a_definition_without_templates_is_returned_as_it_is(tmp_path: Path) -> None:
    loaded = _load(tmp_path, file_secret("a"))
    assert with_rendered(loaded) is loaded


def test_a_template_that_iterates_the_secrets_is_placed_in_every_unit(tmp_path: Path) -> None:
    (tmp_path / "app.j2").write_text("{% for k, v in secrets.items() %}{{ k }}={{ v }}\n{% endfor %}")
    found = with_rendered(_load(tmp_path, {**file_secret("a"), "targets": [_template()]},
                                *(file_secret(f"s{i}") for i in range(3))))
    assert all(_placed(found, f"s{i}") == [("local/template/", True)] for i in range(3))


def test_a_rendered_template_takes_its_own_id_where_the_unit_declares_another_under_secretzeros(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.j2").write_text("{{ b }}")
    (tmp_path / "b.j2").write_text("b")
    found = with_rendered(_load(tmp_path, {**file_secret("a"), "targets": [_template()]},
                                {**file_secret("b"), "targets": [_template("out/b.conf", "b.j2")]}))
    assert _placed(found, "b") == [("local/template/", False), ("local/template/out/app.conf", True)]


def test_a_template_that_cannot_be_read_is_placed_only_where_declared(tmp_path: Path) -> None:
    found = with_rendered(_load(tmp_path, {**file_secret("a"), "targets": [_template()]}, file_secret("b")))
    assert _placed(found, "b") == []


def _member(expected: str | None, *, rendered: bool = True, written: str = T2, updated: str = T1,
            value: str = "v" * 64) -> Member:
    placement = Placement(TargetSpec("local", "template", {"output_path": "o"}), "k", rendered=rendered)
    entry = LockEntry(hash=value, created_at=T1, updated_at=updated, targets={})
    return Member(placement, entry, expected, parse_time(written))


def test_an_output_recorded_after_the_value_changed_is_current() -> None:
    assert classify("o" * 64, [_member("o" * 64)]) == [CURRENT]


def test_an_output_recorded_before_the_value_changed_is_stale() -> None:
    assert classify("o" * 64, [_member("o" * 64, written=T1, updated=T2)]) == [STALE]


def test_a_unit_without_a_record_of_an_output_rendered_before_its_value_changed_is_stale() -> None:
    assert classify("o" * 64, [_member("o" * 64), _member(None, updated=T3)]) == [CURRENT, STALE]


def test_a_unit_without_a_record_of_an_output_rendered_after_its_value_changed_is_only_unrecorded() -> None:
    assert classify("o" * 64, [_member("o" * 64), _member(None)]) == [CURRENT, UNRECORDED]


def test_an_output_no_unit_records_was_changed_by_someone_else() -> None:
    assert classify("o" * 64, [_member("x" * 64), _member(None)]) == [CHANGED, CHANGED]


def test_a_declared_output_never_recorded_is_untracked_and_secretzeros_value_record_is_current() -> None:
    secretzero = _member("v" * 64, rendered=False)  # SecretZero records a template under the value's hash
    assert classify("o" * 64, [secretzero, _member(None, rendered=False)]) == [CURRENT, UNTRACKED]
