"""A template output after syncs and rotations: every secret placed in it keeps its hash current,
and a sync puts back an output that was deleted or (with repair) changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import definition, write_definition

TEMPLATE = "a={{ a }}\nb={{ b }}\n"


def _secret(name: str) -> dict[str, Any]:
    return {"name": name, "kind": "random_hex", "rotation_period": "30d", "targets": [
        {"provider": "local", "kind": "file", "config": {"path": "out/app.env"}},
        {"provider": "local", "kind": "template", "config": {"template_path": "t.j2", "output_path": "out/conf.ini"}},
    ]}


def _workspace(folder: Path) -> Workspace:
    (folder / "t.j2").write_text(TEMPLATE)
    ws = Workspace(definition_path=write_definition(folder, definition(_secret("a"), _secret("b"))),
                   lock_timeout=10, environ={})
    assert sync(ws).secrets_generated == ["a", "b"]
    return ws


def _values(folder: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (folder / "out/conf.ini").read_text().splitlines())


def test_rotating_one_secret_of_a_template_leaves_no_drift_for_the_other(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = _values(tmp_path)
    assert execute_rotation(ws, secret_name="b", force=True).rotated == ["b"]
    assert _values(tmp_path)["a"] == before["a"] and _values(tmp_path)["b"] != before["b"]
    assert detect_drift(ws).has_drift is False


def test_a_plain_sync_after_a_rotation_reports_nothing_about_the_template(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    execute_rotation(ws, secret_name="a", force=True)
    result = sync(ws)
    assert (result.errors, result.secrets_skipped) == ([], ["a", "b"])


def test_a_deleted_template_output_is_rendered_again_by_a_plain_sync(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = (tmp_path / "out/conf.ini").read_text()
    (tmp_path / "out/conf.ini").unlink()
    result = sync(ws)
    assert (result.errors, result.secrets_repaired) == ([], ["a", "b"])
    assert (tmp_path / "out/conf.ini").read_text() == before
    assert detect_drift(ws).has_drift is False


def test_a_changed_template_output_is_an_error_until_a_repair_renders_it_again(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = (tmp_path / "out/conf.ini").read_text()
    (tmp_path / "out/conf.ini").write_text("a=edited\nb=edited\n")
    assert {error.secret for error in sync(ws).errors} == {"a", "b"}
    assert (tmp_path / "out/conf.ini").read_text() == "a=edited\nb=edited\n"
    assert sync(ws, repair=True).errors == []
    assert (tmp_path / "out/conf.ini").read_text() == before
