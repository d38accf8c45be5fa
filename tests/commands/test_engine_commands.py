"""sync, rotate, drift, policy, validate and status: output, --json and CI exit codes."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEntry
from tests.factories import Project, definition, env_secret, environments, file_secret

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


def test_status_of_a_secret_the_definition_does_not_declare_is_an_error_with_the_closest_name(proj: Project) -> None:
    code, out = run("status", "kye", "--json")
    assert (code, json.loads(out)) == (1, {"error": "secret_not_defined", "detail": "secret 'kye' is not defined in "
                                                     "the definition file; did you mean 'key'?"})


def test_status_of_a_declared_secret_not_yet_generated_is_a_finding(proj: Project) -> None:
    code, out = run("status", "key", "--json")
    assert (code, json.loads(out)["exists"]) == (2, False)


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


def test_validate_reports_a_path_outside_the_target_roots_and_takes_the_setting(
        project: Project, settings: Any) -> None:
    project.write(definition(file_secret("db", "/srv/app/.env")))
    code, out = run("validate")
    assert code == 2
    assert "secrets[0] 'db' targets[0] local/file config.path: path /srv/app/.env is outside the allowed target " \
           "roots (SERVICE_TARGET_ROOTS)" in out
    settings.SERVICE_TARGET_ROOTS = (project.root, Path("/srv/app"))
    assert run("validate")[0] == 0


def test_validate_names_an_unsupported_target_kind_in_a_warning_and_exits_0(proj: Project) -> None:
    secret = file_secret("db", "out/app.env", rotation_period="30d")
    secret["targets"].append({"provider": "keeper", "kind": "keeper_record", "config": {"folder": "${FOLDER}"}})
    proj.write(definition(secret))
    code, out = run("validate")
    assert code == 0, out
    assert "warning  secrets[0].targets[1]: target kind 'keeper_record' is not supported by this service" in out


def test_missing_definition_exits_1(project: Project) -> None:
    assert run("sync")[0] == 1


# -- --var-file on every command that renders the definition ---------------------------------


@pytest.fixture
def prod(project: Project) -> Project:
    """One secret synced to out/prod.env with ``--var-file prod.yml``."""
    environments(project, env_secret("db", rotation_period="30d"))
    assert run("sync", "--var-file", "prod.yml")[0] == 0
    return project


def test_drift_takes_the_var_files_it_was_synced_with(prod: Project) -> None:
    assert run("drift", "--var-file", "prod.yml")[0] == 0
    code, out = run("drift")
    assert code == 2 and "untracked_target: local/file/out/dev.env" in out


def test_rotate_takes_var_files_and_never_moves_a_secret(prod: Project) -> None:
    code, out = run("rotate", "--force")
    assert code == 1 and "pass the var files it was synced with" in out
    assert not (prod.root / "out/dev.env").exists()
    assert run("rotate", "--force", "--var-file", "prod.yml")[0] == 0
    assert prod.lock()["secrets"]["db"]["rotation_count"] == 1


def test_rotate_check_reports_a_secret_these_var_files_cannot_rotate(prod: Project) -> None:
    prod.backdate("db", 40)
    code, out = run("rotate")
    assert code == 2 and "overdue by 10 days; rotating would move it" in out
    code, out = run("rotate", "--var-file", "prod.yml")
    assert code == 2 and "rotating would move it" not in out


def test_status_takes_var_files(prod: Project) -> None:
    code, out = run("status", "db", "--json", "--var-file", "prod.yml")
    assert code == 0 and json.loads(out)["targets"] == ["local/file/out/prod.env"]
    assert run("status", "--var-file", "nope.yml")[0] == 1


def test_policy_takes_var_files(project: Project) -> None:
    project.write(definition(file_secret("db", rotation_period="{{ var.period }}"), variables={"period": "30d"},
                             policies={"age": {"kind": "rotation", "max_age": "60d"}}))
    (project.root / "prod.yml").write_text("period: 90d\n")
    assert run("policy")[0] == 0
    code, out = run("policy", "--var-file", "prod.yml")
    assert code == 2 and "exceeds max_age 60d" in out


def test_validate_checks_the_definition_with_the_var_files(project: Project) -> None:
    project.write(definition(file_secret("db", rotation_period="{{ var.period }}"), variables={"period": "30d"}))
    (project.root / "bad.yml").write_text("period: 9q\n")
    assert run("validate")[0] == 0
    code, out = run("validate", "--var-file", "bad.yml")
    assert code == 2 and "rotation_period" in out
    assert run("validate", "--var-file", "../outside.yml")[0] == 1


def test_every_command_audits_its_var_files(prod: Project) -> None:
    for command in ("drift", "policy", "validate", "rotate"):
        run(command, "--var-file", "prod.yml")
    for action in ("check_drift", "check_policy", "validate_config", "check_rotation"):
        assert AuditEntry.objects.get(action=action).details["var_files"] == ["prod.yml"], action


def test_sync_repair_puts_a_lost_copy_back(proj: Project) -> None:
    secret = file_secret("db", "out/app.env")
    secret["targets"].append({"provider": "local", "kind": "file", "config": {"path": "out/b.json", "format": "json"}})
    proj.write(definition(secret))
    run("sync")
    (proj.root / "out/app.env").unlink()
    code, out = run("sync", "--repair")
    assert code == 0 and "repaired   db" in out
    assert (proj.root / "out/app.env").exists()


def test_sync_repair_without_a_verified_copy_exits_1_and_writes_nothing(proj: Project) -> None:
    run("sync")
    (proj.root / "out/app.env").write_text("db=other\n")
    code, out = run("sync", "--repair", "--dry-run", "--json")
    assert code == 1  # db has no verified copy: named in errors
    assert json.loads(out)["errors"][0]["secret"] == "db"
    assert (proj.root / "out/app.env").read_text() == "db=other\n"


def test_validate_reports_every_target_sync_would_refuse_and_exits_2(project: Project) -> None:
    secret = file_secret("db", "out/app.env", rotation_period="30d")
    secret["targets"] += [{"provider": "local", "kind": "template", "config": {"output_path": "out/x"}},
                          {"provider": "aws", "kind": "secrets_manager", "config": {}}]
    project.write(definition(secret))
    code, out = run("validate", "--json")
    assert code == 2
    assert json.loads(out)["errors"] == [
        "secrets[0] 'db' targets[1] local/template: config.template_path is required and must be a non-empty "
        "string",
        "secrets[0] 'db' targets[2] aws/secrets_manager: config.name is required"]


def test_a_plain_sync_writes_a_deleted_target_again_and_exits_0(proj: Project) -> None:
    secret = file_secret("db", "out/app.env")
    secret["targets"].append({"provider": "local", "kind": "file", "config": {"path": "out/b.json", "format": "json"}})
    proj.write(definition(secret))
    run("sync")
    (proj.root / "out/app.env").unlink()
    code, out = run("sync")
    assert code == 0 and "repaired   db" in out
    assert (proj.root / "out/app.env").exists()


def test_a_sync_with_a_changed_target_says_incomplete_lists_the_error_first_and_exits_1(proj: Project) -> None:
    run("sync")
    (proj.root / "out/app.env").write_text("db=other\n")
    code, out = run("sync")
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith("Sync incomplete: ")
    assert lines[1].startswith("  error      db [local/file/out/app.env]: holds another value")
    assert lines[2:] == ["  skipped    key"]
