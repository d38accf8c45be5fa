"""A template output renders secrets that do not list it as a target: it is recorded under each of
them and rendered again whenever any of them changes, drift reports it stale under each secret
whose value it lacks, and a sync (or a repair) renders it again."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import import_values, sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import app_project, app_values, write_definition

TEMPLATE = "local/template/"  # SecretZero's id of a template target that names none


def _workspace(folder: Path) -> Workspace:
    ws = Workspace(definition_path=write_definition(folder, app_project(folder)), lock_timeout=10, environ={})
    assert sync(ws).errors == []
    return ws


def _lock(ws: Workspace) -> Any:
    return json.loads(ws.lockfile_path.read_text())


def _current(folder: Path) -> bool:
    env, conf = app_values(folder)
    return conf == {"redis": env["redis_password"], "postgres": env["postgres_password"]}


def _findings(ws: Workspace) -> set[tuple[str, str, str]]:
    return {(i.secret, i.details["reason"], i.details["target"]) for i in detect_drift(ws).details}


def _rotate_behind_its_back(ws: Workspace, folder: Path, *, keep_our_keys: bool = False) -> None:
    """A new postgres_password in app.env and in its entry, the template left alone: what
    SecretZero's rotation leaves (it drops the entry keys it does not know when it rewrites the
    file), or, ``keep_our_keys``, a tool that keeps them (an earlier version of this service)."""
    env_file = folder / "out/app.env"
    old = app_values(folder)[0]["postgres_password"]
    env_file.write_text(env_file.read_text().replace(old, "f" * 32))
    data = _lock(ws)
    if not keep_our_keys:
        for entry in data["secrets"].values():
            entry.pop("rendered_outputs", None)
            entry.pop("last_change", None)
    entry = data["secrets"]["postgres_password"]
    entry["hash"] = entry["targets"]["local/file/out/app.env"] = sha256_text("f" * 32)
    entry["updated_at"] = entry["last_rotated"] = datetime.now(UTC).isoformat()
    ws.lockfile_path.write_text(json.dumps(data))


def test_a_template_is_recorded_under_every_secret_it_renders(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    output = sha256_text((tmp_path / "out/app.conf").read_text())
    secrets = _lock(ws)["secrets"]
    # Under targets where declared; beside them for the others, where SecretZero does not take it for a stale target.
    assert secrets["postgres_password"]["rendered_outputs"][TEMPLATE]["hash"] == output
    assert TEMPLATE not in secrets["postgres_password"]["targets"]
    assert secrets["redis_password"]["targets"][TEMPLATE] == output
    assert TEMPLATE not in secrets["session_key"]["targets"]


def test_rotating_a_secret_renders_the_templates_that_use_it_again(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = app_values(tmp_path)[1]
    assert execute_rotation(ws, secret_name="postgres_password", force=True).rotated == ["postgres_password"]
    assert _current(tmp_path) and app_values(tmp_path)[1]["postgres"] != before["postgres"]
    assert detect_drift(ws).has_drift is False


def test_a_forced_sync_of_one_secret_renders_the_templates_that_use_it_again(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert sync(ws, force=True, secret_name="postgres_password").secrets_generated == ["postgres_password"]
    assert _current(tmp_path)
    assert detect_drift(ws).has_drift is False


def test_importing_a_changed_value_renders_the_templates_that_use_it_again(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    env_file = tmp_path / "out/app.env"
    env_file.write_text(env_file.read_text().replace(app_values(tmp_path)[0]["postgres_password"], "a" * 32))
    result = import_values(ws, secret_names=["postgres_password"])
    assert [row.status for row in result.rows] == ["updated"]
    assert app_values(tmp_path)[1]["postgres"] == "a" * 32
    assert detect_drift(ws).has_drift is False


def test_drift_reports_a_stale_output_under_the_secret_whose_value_it_lacks(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _rotate_behind_its_back(ws, tmp_path)
    assert _findings(ws) == {("postgres_password", "stale_output", TEMPLATE)}


def test_drift_reports_a_stale_output_its_record_predates_under_the_secret(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _rotate_behind_its_back(ws, tmp_path, keep_our_keys=True)
    assert _findings(ws) == {("postgres_password", "stale_output", TEMPLATE)}


def test_an_output_rendered_since_the_value_changed_is_current_for_it_without_a_record(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    data = _lock(ws)
    for entry in data["secrets"].values():
        entry.pop("rendered_outputs", None)  # SecretZero drops the keys it does not know
    ws.lockfile_path.write_text(json.dumps(data))
    assert detect_drift(ws).has_drift is False
    assert sync(ws).secrets_repaired == []  # nothing to render: the next render records it
    execute_rotation(ws, secret_name="redis_password", force=True)
    assert _lock(ws)["secrets"]["postgres_password"]["rendered_outputs"][TEMPLATE]["hash"] == sha256_text(
        (tmp_path / "out/app.conf").read_text())


def test_a_plain_sync_renders_a_stale_output_again(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _rotate_behind_its_back(ws, tmp_path)
    result = sync(ws)
    assert (result.errors, result.secrets_repaired) == ([], ["postgres_password"])
    assert _current(tmp_path) and app_values(tmp_path)[1]["postgres"] == "f" * 32
    assert detect_drift(ws).has_drift is False


def test_a_hand_edited_output_is_reported_under_every_secret_it_renders_until_a_repair(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = (tmp_path / "out/app.conf").read_text()
    (tmp_path / "out/app.conf").write_text("redis=edited\npostgres=edited\n")
    assert {(s, reason) for s, reason, _ in _findings(ws)} == {
        ("redis_password", "value_changed"), ("postgres_password", "value_changed")}
    assert {error.secret for error in sync(ws).errors} == {"redis_password", "postgres_password"}
    assert sync(ws, repair=True).errors == []
    assert (tmp_path / "out/app.conf").read_text() == before


def test_an_output_that_could_not_be_written_is_reported_under_the_rotated_secret_only(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    output = tmp_path / "out/app.conf"
    output.rename(tmp_path / "kept.conf")
    output.mkdir()  # a folder where the output goes: its write fails
    result = execute_rotation(ws, secret_name="postgres_password", force=True)
    assert result.rotated == ["postgres_password"] and {e.target for e in result.errors} == {TEMPLATE}
    shutil.rmtree(output)
    (tmp_path / "kept.conf").rename(output)
    assert _findings(ws) == {("postgres_password", "stale_output", TEMPLATE)}
    assert sync(ws).secrets_repaired == ["postgres_password"]
    assert _current(tmp_path)


def test_a_secret_a_template_no_longer_renders_rotates_and_loses_its_record(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (tmp_path / "app.conf.j2").write_text("redis={{ redis_password }}\n")
    assert execute_rotation(ws, secret_name="postgres_password", force=True).errors == []
    assert _lock(ws)["secrets"]["postgres_password"].get("rendered_outputs", {}) == {}


def test_drift_reports_an_output_whose_template_cannot_be_read(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (tmp_path / "app.conf.j2").unlink()
    (item,) = detect_drift(ws).details
    assert (item.secret, item.details["reason"], item.details["problem"]) == (
        "redis_password", "target_unreadable", "template 'app.conf.j2' not found")


def test_a_forced_sync_that_reads_a_changed_source_renders_the_templates_that_use_it_again(tmp_path: Path) -> None:
    doc = app_project(tmp_path)
    doc["secrets"][0]["source"] = {"kind": "file", "config": {"path": "pg.txt"}}
    (tmp_path / "pg.txt").write_text("first-value")
    ws = Workspace(definition_path=write_definition(tmp_path, doc), lock_timeout=10, environ={})
    assert sync(ws).sources == {"postgres_password": "file"}
    (tmp_path / "pg.txt").write_text("second-value")
    assert sync(ws, force=True, secret_name="postgres_password").sources == {"postgres_password": "file"}
    assert app_values(tmp_path)[1]["postgres"] == "second-value"
    assert detect_drift(ws).has_drift is False
