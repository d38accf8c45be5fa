"""A newcomer's project through secretsctl: five secrets in a dotenv file, a JSON file and a template
(``app.conf``, a target of ``redis_password``, renders ``postgres_password`` too): a rotation keeps
the template current, drift reports a stale one, a plain sync renders it again; a hand-edited
value gets an error naming the command that fixes it, and the status says how it last changed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from secretsapi.cli.app import cli
from secretsapi.service.util.hashing import sha256_text
from tests.factories import Project, app_project, app_values

pytestmark = pytest.mark.django_db


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def data(result: Result) -> Any:
    return json.loads(result.stdout)


@pytest.fixture
def app(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(project.root)
    project.write(app_project(project.root))
    assert run("sync").exit_code == 0
    return project


def _current(root: Path) -> bool:
    env, conf = app_values(root)
    return conf == {"redis": env["redis_password"], "postgres": env["postgres_password"]}


def test_rotating_a_secret_a_template_renders_keeps_the_template_current(app: Project) -> None:
    before = app_values(app.root)[1]["postgres"]
    assert run("rotate", "--force", "postgres_password").exit_code == 0
    assert _current(app.root) and app_values(app.root)[1]["postgres"] != before
    drift = run("drift")
    assert (drift.exit_code, drift.stdout.strip()) == (0, "No drift.")
    assert data(run("status", "-s", "postgres_password", "--format", "json"))["targets"] == [
        "local/file/out/app.env", "local/template/"]


def test_a_stale_template_is_drift_under_the_secret_it_lacks_and_a_plain_sync_renders_it(app: Project) -> None:
    # What SecretZero's rotation leaves: a new postgres_password, app.conf untouched, our keys dropped.
    env_file = app.root / "out/app.env"
    env_file.write_text(env_file.read_text().replace(app_values(app.root)[0]["postgres_password"], "e" * 32))
    lock = app.lock()
    entry = lock["secrets"]["postgres_password"]
    entry["hash"] = entry["targets"]["local/file/out/app.env"] = sha256_text("e" * 32)
    entry["updated_at"] = entry["last_rotated"] = datetime.now(UTC).isoformat()
    del entry["rendered_outputs"]
    app.save_lock(lock)

    drift = run("drift", "--format", "json")
    assert drift.exit_code == 2
    assert [(d["secret"], d["details"]["reason"]) for d in data(drift)["details"]] == [
        ("postgres_password", "stale_output")]
    sync = run("sync", "--format", "json")
    assert (sync.exit_code, data(sync)["secrets_repaired"]) == (0, ["postgres_password"])
    assert _current(app.root) and app_values(app.root)[1]["postgres"] == "e" * 32
    assert run("drift").exit_code == 0


def test_a_hand_edited_dotenv_value_names_the_commands_that_fix_it(app: Project) -> None:
    env_file = app.root / "out/app.env"
    env_file.write_text(env_file.read_text().replace(app_values(app.root)[0]["session_key"], "d" * 32))
    for args in (("sync",), ("sync", "--repair")):
        result = run(*args)
        assert result.exit_code == 1
        assert "import to record the value it holds, or sync with force" in result.output
        assert "sync with repair" not in result.output
    assert run("import", "-s", "session_key").exit_code == 0
    assert run("sync").exit_code == 0 and run("drift").exit_code == 0


def test_the_status_shows_when_and_how_each_value_last_changed(app: Project) -> None:
    assert run("sync", "--force", "-s", "session_key").exit_code == 0
    rows = {line.split()[0]: line.split() for line in run("status").stdout.splitlines()[1:]}
    assert rows["session_key"][6:8] == ["regenerated", "never"]  # LAST ROTATED: a forced sync is not a rotation
    shown = data(run("status", "-s", "session_key", "--format", "json"))
    assert (shown["last_change"], shown["last_rotated"]) == ("regenerated", None)
    assert rows["api_key"][6] == "generated"
