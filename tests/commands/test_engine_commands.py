"""sync, rotate, drift, policy, validate and status: output, --json and CI exit codes."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command(*args, stdout=out)
    except CommandError as exc:
        return exc.returncode, out.getvalue()
    return 0, out.getvalue()


@pytest.fixture
def proj(project: Project) -> Project:
    return project.write(definition(
        file_secret("db", "out/app.env", rotation_period="30d"),
        file_secret("key", "out/app.json", kind="random_hex", rotation_period="90d"),
    ))


def test_sync_generates_and_exits_0(proj: Project) -> None:
    code, out = run("sync")
    assert code == 0 and "generated  db" in out
    assert set(proj.lock()["secrets"]) == {"db", "key"}


def test_sync_json_output_is_the_sync_result(proj: Project) -> None:
    code, out = run("sync", "--json", "--dry-run")
    body = json.loads(out)
    assert code == 0 and sorted(body["secrets_generated"]) == ["db", "key"] and body["dry_run"] is True


def test_sync_with_a_failing_target_exits_1(proj: Project) -> None:
    (proj.root / "out").write_text("not a folder")
    code, _ = run("sync")
    assert code == 1


def test_commands_audit_as_the_os_user(proj: Project) -> None:
    run("sync")
    row = AuditEntry.objects.get(action="sync")
    assert row.user is not None and row.user.startswith("cli:")


def test_definition_and_lockfile_flags_override_settings(proj: Project, tmp_path: Any) -> None:
    other = tmp_path / "elsewhere.lock"
    code, _ = run("sync", "--definition", str(proj.definition), "--lockfile", str(other))
    assert code == 0 and other.exists() and not proj.lockfile.exists()


def test_status_exits_2_until_everything_is_generated(proj: Project) -> None:
    assert run("status")[0] == 2
    run("sync")
    code, out = run("status", "db", "--json")
    assert code == 0 and json.loads(out)["exists"] is True


def test_rotate_check_exits_2_when_a_secret_is_due(proj: Project) -> None:
    run("sync")
    assert run("rotate")[0] == 0
    proj.backdate("db", 40)
    code, out = run("rotate")
    assert code == 2 and "overdue by 10 days" in out


def test_rotate_execute_rotates_due_secrets(proj: Project) -> None:
    run("sync")
    proj.backdate("db", 40)
    code, out = run("rotate", "--execute")
    assert code == 0 and "rotated  db" in out
    assert proj.lock()["secrets"]["db"]["rotation_count"] == 1
    assert proj.lock()["secrets"]["key"]["rotation_count"] == 0


def test_rotate_force_rotates_everything(proj: Project) -> None:
    run("sync")
    assert run("rotate", "--force")[0] == 0
    assert {e["rotation_count"] for e in proj.lock()["secrets"].values()} == {1}


def test_drift_exits_2_after_a_hand_edit(proj: Project) -> None:
    run("sync")
    assert run("drift")[0] == 0
    (proj.root / "out/app.json").write_text('{"key": "edited"}')
    code, out = run("drift", "--json")
    assert code == 2 and json.loads(out)["details"][0]["details"]["reason"] == "value_changed"


def test_policy_exits_2_when_not_compliant(proj: Project) -> None:
    run("sync")
    assert run("policy")[0] == 0
    proj.write(definition(file_secret("db", "out/app.env"), metadata={"compliance": ["soc2"]}))
    code, out = run("policy")
    assert code == 2 and "SOC2" in out


def test_validate_exits_2_on_an_invalid_definition(proj: Project) -> None:
    assert run("validate")[0] == 0
    proj.write({"secrets": [{"name": "x", "kind": "random_hex", "rotation_period": "9q"}]})
    code, out = run("validate")
    assert code == 2 and "Missing required field: version" in out and "rotation_period" in out


def test_validate_names_an_unsupported_target_kind_in_a_warning_and_exits_0(proj: Project) -> None:
    secret = file_secret("db", "out/app.env", rotation_period="30d")
    secret["targets"].append({"provider": "github", "kind": "github_secret", "config": {"repo": "${REPO}"}})
    proj.write(definition(secret))
    code, out = run("validate")
    assert code == 0, out
    assert "warning  secrets[0].targets[1]: target kind 'github_secret' is not supported by this service" in out


def test_missing_definition_exits_1(project: Project) -> None:
    assert run("sync")[0] == 1
