"""local/template targets: sandboxed rendering, read-back, and errors without values."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets import ReadBack, TargetContext, get_kind
from secretsapi.service.targets.template import rendered_keys
from secretsapi.service.util.hashing import sha256_text
from tests.asserts import recorded_atomic_writes

KIND = get_kind("local/template")
VALUES = {"db_password": "pa$$ \"w'rd\"\n", "api_key": "k-123", "creds.user": "admin",
          "creds.pass": "hunter2"}


def make_ctx(base: Path, values: dict[str, str | None] | None = None,
             calls: list[str] | None = None) -> TargetContext:
    known: dict[str, str | None] = dict(VALUES if values is None else values)

    def value_of(key: str) -> str | None:
        if calls is not None:
            calls.append(key)
        return known.get(key)

    return TargetContext(base_dir=base, providers={}, value_of=value_of, lock_keys=tuple(known))


def place(key: str, template: str = "app.conf.j2", output: str = "out/app.conf") -> Placement:
    return Placement(TargetSpec("local", "template",
                                {"template_path": template, "output_path": output}), key)


def render_with(tmp_path: Path, source: str, **kwargs: Any) -> str:
    (tmp_path / "app.conf.j2").write_text(source)
    KIND.write([(place("db_password"), "ignored")], make_ctx(tmp_path, **kwargs))
    return (tmp_path / "out/app.conf").read_text()


def test_template_renders_secrets_by_subscript_and_attribute(tmp_path: Path) -> None:
    output = render_with(tmp_path, "pw={{ secrets['db_password'] }}\nkey={{ secrets.api_key }}\n")
    assert output == f"pw={VALUES['db_password']}\nkey=k-123\n"


def test_template_fields_are_reachable_as_nested_secrets(tmp_path: Path) -> None:
    output = render_with(tmp_path, "{{ secrets.creds.user }}:{{ secrets['creds.pass'] }}")
    assert output == "admin:hunter2"


def test_template_can_iterate_over_every_lock_key_in_definition_order(tmp_path: Path) -> None:
    source = "{% for name, value in secrets.items() %}{{ name }}={{ value | length }} {% endfor %}"
    output = render_with(tmp_path, source)
    assert output == "db_password=12 api_key=5 creds.user=5 creds.pass=7 "


def test_write_returns_the_output_hash_for_every_placement(tmp_path: Path) -> None:
    (tmp_path / "app.conf.j2").write_text("{{ secrets.api_key }}")
    recorded = KIND.write([(place("api_key"), "k-123"), (place("db_password"), "x")],
                          make_ctx(tmp_path))
    assert recorded == {"api_key": sha256_text("k-123"), "db_password": sha256_text("k-123")}


def test_read_back_matches_the_recorded_hash(tmp_path: Path) -> None:
    (tmp_path / "app.conf.j2").write_text("{{ secrets.api_key }}\n")
    ctx = make_ctx(tmp_path)
    recorded = KIND.write([(place("api_key"), "k-123")], ctx)
    assert KIND.read([place("api_key")], ctx) == {
        "api_key": ReadBack(True, recorded["api_key"], "out/app.conf")}


def test_read_of_a_missing_output_reports_it_absent(tmp_path: Path) -> None:
    assert KIND.read([place("api_key")], make_ctx(tmp_path)) == {
        "api_key": ReadBack(False, None, "out/app.conf")}


def test_only_the_secrets_a_template_uses_are_fetched(tmp_path: Path) -> None:
    calls: list[str] = []
    render_with(tmp_path, "{{ secrets.api_key }}{{ secrets.api_key }}", calls=calls)
    assert calls == ["api_key"]


def test_output_is_created_0600_and_keeps_the_trailing_newline(tmp_path: Path) -> None:
    assert render_with(tmp_path, "x\n") == "x\n"
    assert os.stat(tmp_path / "out/app.conf").st_mode & 0o777 == 0o600


def test_group_renders_and_writes_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = recorded_atomic_writes(monkeypatch)
    (tmp_path / "app.conf.j2").write_text("{{ secrets.api_key }}")
    KIND.write([(place("api_key"), "a"), (place("db_password"), "b")], make_ctx(tmp_path))
    assert len(calls) == 1


def test_undefined_name_is_a_target_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="nope"):
        render_with(tmp_path, "{{ secrets.nope }}")


def test_secret_without_a_value_is_a_target_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="'api_key', which has no value"):
        render_with(tmp_path, "{{ secrets.api_key }}", values={"api_key": None})


def test_lookup_by_a_secret_value_does_not_leak_it(tmp_path: Path) -> None:
    with pytest.raises(TargetError) as info:
        render_with(tmp_path, "{{ {}[secrets['creds.pass']] }}")
    assert "hunter2" not in info.value.message


def test_runtime_error_reports_only_its_type(tmp_path: Path) -> None:
    with pytest.raises(TargetError) as info:
        render_with(tmp_path, "{{ secrets['creds.pass'].encode('ascii').decode('utf-16') }}")
    assert "hunter2" not in info.value.message and "failed to render" in info.value.message


def test_syntax_error_names_the_template_and_line(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match=r"'app\.conf\.j2' line 2"):
        render_with(tmp_path, "ok\n{% if %}\n")


def test_sandbox_refuses_unsafe_attributes(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="sandbox"):
        render_with(tmp_path, "{{ secrets.__class__.__init__.__globals__ }}")


def test_missing_template_is_a_target_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match=r"'app\.conf\.j2' not found"):
        KIND.write([(place("api_key"), "x")], make_ctx(tmp_path))


@pytest.mark.parametrize(("template", "output"), [
    ("../t.j2", "out.conf"), ("t.j2", "../out.conf"), ("/etc/passwd", "out.conf"),
])
def test_paths_outside_the_definition_folder_are_refused(
        tmp_path: Path, template: str, output: str) -> None:
    base = tmp_path / "project"
    base.mkdir()
    (tmp_path / "t.j2").write_text("x")
    with pytest.raises(TargetError, match=r"outside the allowed target roots \(SERVICE_TARGET_ROOTS\)"):
        KIND.write([(place("k", template, output), "v")], make_ctx(base))
    assert not (tmp_path / "out.conf").exists()


def test_target_id_is_secretzeros_which_ignores_the_output_path(tmp_path: Path) -> None:
    assert KIND.target_id(place("k").target, make_ctx(tmp_path)) == "local/template/"


@pytest.mark.parametrize(("extra", "expected"), [
    ({"name": "app"}, "app"), ({"path": "p", "name": "n"}, "n"), ({"target_id": "t", "name": "n"}, "t"),
    ({"record_uid": "r", "title": "x"}, "r"), ({"title": "x"}, "x"), ({"name": ""}, ""),
])
def test_target_id_takes_the_first_naming_key_as_secretzero_does(
        tmp_path: Path, extra: dict[str, str], expected: str) -> None:
    target = TargetSpec("local", "template", {"template_path": "t.j2", "output_path": "o", **extra})
    assert KIND.target_id(target, make_ctx(tmp_path)) == f"local/template/{expected}"


def test_validate_accepts_a_good_config() -> None:
    assert KIND.validate(place("k").target, "here") == []


def test_describe_lists_both_paths_and_secretzeros_keys() -> None:
    assert set(KIND.describe()["config"]) == {"template_path", "output_path", "name", "overwrite"}


def test_bare_placeholders_name_secrets_as_in_secretzero(tmp_path: Path) -> None:
    assert render_with(tmp_path, "{{ api_key }}/{{ secrets['api_key'] }}") == "k-123/k-123"


def test_bare_placeholders_name_template_fields_by_their_own_name(tmp_path: Path) -> None:
    assert render_with(tmp_path, "{{ user }}:{{ pass }}") == "admin:hunter2"


def test_bare_placeholders_fetch_only_the_values_they_name(tmp_path: Path) -> None:
    calls: list[str] = []
    (tmp_path / "app.conf.j2").write_text("{{ api_key }}")
    KIND.write([(place("api_key"), "k-123")], make_ctx(tmp_path, calls=calls))
    assert calls == ["api_key"]


def test_an_unknown_bare_name_is_still_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="'nope' is undefined"):
        render_with(tmp_path, "{{ nope }}")


def test_absolute_template_and_output_inside_a_root_are_used(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("srv")
    (root / "t.j2").write_text("K={{ secrets['api_key'] }}\n")
    ctx = replace(make_ctx(tmp_path), target_roots=(root,))
    KIND.write([(place("api_key", str(root / "t.j2"), str(root / "out.env")), "k-123")], ctx)
    assert (root / "out.env").read_text() == "K=k-123\n"


KEYS = ["db_password", "api_key", "creds.user", "creds.pass", "items"]


@pytest.mark.parametrize(("source", "keys"), [
    ("{{ db_password }} {{ secrets.api_key }}", {"db_password", "api_key"}),
    ("{{ secrets['creds.pass'] }} {{ secrets.creds.user }}", {"creds.pass", "creds.user"}),
    ("{{ user }}", {"creds.user"}),  # a field by its own name, as SecretZero names it
    ("{{ secrets.creds | list }}", {"creds.user", "creds.pass"}),  # the group handed on whole
    ("{{ secrets['items'] }}", {"items"}),
    ("{% if api_key %}{{ db_password }}{% endif %}", {"api_key", "db_password"}),  # both branches count
    ("{% set api_key = 'x' %}{{ api_key }} {{ secrets.nothing }}", set()),
])
def test_rendered_keys_are_the_units_a_template_names(source: str, keys: set[str]) -> None:
    assert rendered_keys(source, KEYS) == frozenset(keys)


@pytest.mark.parametrize("source", [
    "{% for name, value in secrets.items() %}{{ value }}{% endfor %}",
    "{% for name in secrets %}{% endfor %}",
    "{{ secrets[name] }}",
    "{% set all = secrets %}{{ all.api_key }}",
])
def test_a_template_that_can_reach_any_unit_renders_every_one(source: str) -> None:
    assert rendered_keys(source, KEYS) is None


def test_a_template_that_does_not_parse_is_a_target_error_naming_its_line() -> None:
    with pytest.raises(TargetError, match="line 2"):
        rendered_keys("ok\n{% if %}", KEYS)
