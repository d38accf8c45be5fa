"""secretsctl, through Click's CliRunner: SecretZero's flags and defaults, the management
commands' exit codes (0 clean, 1 error, 2 a finding), JSON output and the audit rows."""

from __future__ import annotations

import getpass
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from audit.models import AuditEntry
from secretsapi.cli import progress
from secretsapi.cli.app import cli
from tests.factories import Project, definition, file_secret

pytestmark = pytest.mark.django_db


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def data(result: Result) -> Any:
    return json.loads(result.stdout)


def entry(root: Path, lockfile: str, name: str) -> Any:
    return json.loads((root / lockfile).read_text())["secrets"].get(name)


@pytest.fixture
def here(lanes: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """SecretZero is run from the project's folder: ``-f Secretfile.yml`` and ``-v`` paths are relative to it."""
    monkeypatch.chdir(lanes.root)
    return lanes


def test_sync_with_e_uses_that_environment(here: Project) -> None:
    result = run("sync", "-f", "Secretfile.yml", "-e", "prod", "--format", "json")
    assert result.exit_code == 0
    assert sorted(data(result)["secrets_generated"]) == ["api_key", "db_password"]
    assert entry(here.root, ".gitsecrets.prod.lock", "api_key")["targets"] == {
        "local/file/out/prod-app.json": entry(here.root, ".gitsecrets.prod.lock", "api_key")["hash"]}


def test_e_before_the_subcommand_applies_too(here: Project) -> None:
    assert run("-f", "Secretfile.yml", "-e", "prod", "sync").exit_code == 0
    assert (here.root / ".gitsecrets.prod.lock").exists() and not (here.root / ".gitsecrets.dev.lock").exists()


def test_sync_without_e_uses_the_default_environment(here: Project) -> None:
    assert run("sync").exit_code == 0
    assert (here.root / "out/dev.env").exists() and (here.root / ".gitsecrets.dev.lock").exists()


def test_sync_dry_run_writes_nothing(here: Project) -> None:
    result = run("sync", "--dry-run", "--format", "json")
    assert (result.exit_code, data(result)["dry_run"]) == (0, True)
    assert not (here.root / "out").exists() and not (here.root / ".gitsecrets.dev.lock").exists()


def test_a_repeated_s_syncs_only_those_secrets(here: Project) -> None:
    result = run("sync", "-s", "api_key", "--format", "json")
    assert (result.exit_code, data(result)["secrets_generated"]) == (0, ["api_key"])
    assert entry(here.root, ".gitsecrets.dev.lock", "db_password") is None


def test_v_adds_a_var_file_read_from_the_working_folder(here: Project) -> None:
    (here.root / "qa.szvar").write_text("env: qa\n")
    assert run("sync", "-v", "qa.szvar").exit_code == 0
    assert (here.root / "out/qa.env").exists()


def test_sync_text_says_what_was_generated(here: Project) -> None:
    result = run("sync")
    assert result.stdout.splitlines()[0] == "Sync complete: 2 secret(s) generated, 0 skipped."
    assert "  generated  db_password" in result.stdout.splitlines()


def test_a_failed_target_exits_1(here: Project) -> None:
    (here.root / "out").write_text("not a folder")
    result = run("sync", "--format", "json")
    assert result.exit_code == 1 and data(result)["errors"]


def test_rotate_executes_without_dry_run(here: Project) -> None:
    run("sync")
    result = run("rotate", "-s", "db_password", "--force", "--format", "json")
    assert (result.exit_code, data(result)["rotated"]) == (0, ["db_password"])
    assert entry(here.root, ".gitsecrets.dev.lock", "db_password")["rotation_count"] == 1


def test_rotate_dry_run_only_reports(here: Project) -> None:
    run("sync")
    result = run("rotate", "db_password", "--force", "--dry-run", "--format", "json")
    assert (result.exit_code, data(result)["secrets_checked"]) == (0, 1)
    assert entry(here.root, ".gitsecrets.dev.lock", "db_password")["rotation_count"] == 0


def test_status_exits_2_until_every_secret_is_generated(here: Project) -> None:
    before = run("status", "--format", "json")
    run("sync")
    after = run("status", "--format", "json")
    assert (before.exit_code, after.exit_code) == (2, 0)
    assert [s["exists"] for s in data(after)] == [True, True]


def test_status_in_an_environment_reads_its_lockfile(here: Project) -> None:
    run("sync", "-e", "prod")
    assert (run("status", "-e", "prod").exit_code, run("status").exit_code) == (0, 2)


def test_show_prints_the_secret_without_its_value(here: Project) -> None:
    run("sync")
    result = run("show", "db_password", "--format", "json")
    body = data(result)
    assert result.exit_code == 0 and body["definition"]["kind"] == "random_password"
    value = (here.root / "out/dev.env").read_text().split("=", 1)[1].strip().strip('"')
    assert body["status"]["exists"] is True and value not in result.stdout


def test_show_of_an_undefined_secret_exits_1(here: Project) -> None:
    result = run("show", "nope", "--format", "json")
    assert (result.exit_code, data(result)["error"]) == (1, "secret_not_defined")


def test_drift_exits_2_when_a_target_is_gone(here: Project) -> None:
    run("sync")
    (here.root / "out/dev.env").unlink()
    result = run("drift", "--format", "json")
    assert result.exit_code == 2 and data(result)["secrets_with_drift"] == ["db_password"]


def test_policy_and_validate_exit_0_on_a_good_definition(here: Project) -> None:
    assert (run("policy").exit_code, run("validate").exit_code) == (0, 0)


def test_validate_exits_2_on_errors(here: Project) -> None:
    here.write(definition({"name": "x", "kind": "random_password", "targets": "nope"}))
    result = run("validate", "--format", "json")
    assert result.exit_code == 2 and data(result)["valid"] is False


def test_validate_names_a_setting_the_sync_would_trip_on(here: Project) -> None:
    here.write({"version": "1.0", "providers": {"vault": {"kind": "ansible_vault"}},
                "secrets": [{"name": "x", "kind": "uuid", "targets": [
                    {"provider": "vercel", "kind": "vercel_env", "config": {}},
                    {"provider": "vault", "kind": "ansible_vault_file", "config": {}}]}]})
    result = run("validate", "--format", "json")
    assert result.exit_code == 2 and data(result)["valid"] is False
    assert [e.rpartition(": ")[2] for e in data(result)["errors"]] == [
        "config.project_id is required (in the target, or project_id in provider 'vercel')",
        "vault_file is required"]


def test_render_shows_the_environment_applied(here: Project) -> None:
    result = run("render", "-e", "prod", "--format", "json")
    assert data(result)["variables"]["env"] == "prod"


def test_list_secrets_has_secretzeros_shape(here: Project) -> None:
    body = data(run("list", "secrets", "--format", "json"))
    assert body["total"] == 2 and body["secrets"][0]["targets"] == [{"provider": "local", "kind": "file"}]


def test_list_targets_shows_the_target_profile(here: Project) -> None:
    body = data(run("list", "targets", "-e", "prod", "--format", "json"))
    assert {t["config"]["path"] for t in body["targets"]} == {"out/prod-app.json"}


def test_list_variables_shows_the_environments_values(here: Project) -> None:
    assert data(run("list", "variables", "-e", "prod", "--format", "json"))["variables"] == {"env": "prod"}


def test_list_providers_lists_the_declared_ones(project: Project) -> None:
    project.write(definition(file_secret("s"), providers={"aws": {"kind": "aws", "auth": {"kind": "ambient"}}}))
    body = data(run("-f", str(project.definition), "list", "providers", "--format", "json"))
    assert body["providers"] == [{"name": "aws", "kind": "aws", "auth_kind": "ambient", "config": {}}]


def test_every_operation_is_audited_as_the_os_user(here: Project) -> None:
    run("sync", "-e", "prod")
    row = AuditEntry.objects.get(action="sync")
    assert (row.user, row.details["environment"]) == (f"cli:{getpass.getuser()}", "prod")


def test_audit_lists_the_rows_newest_first(here: Project) -> None:
    run("sync")
    body = data(run("audit", "-n", "5", "--format", "json"))
    assert [e["action"] for e in body["entries"][:1]] == ["sync"]


def test_audit_names_each_rows_project_environment_origin_and_outcome(here: Project) -> None:
    from audit import origin

    run("sync", "-e", "prod")
    (row,) = data(run("audit", "-a", "sync", "--format", "json"))["entries"]
    assert (row["environment"], row["outcome"], row["origin"]) == ("prod", "ok", origin.process_origin())
    assert row["definition"] == str(here.root / "Secretfile.yml")
    lines = run("audit", "-a", "sync").stdout.splitlines()
    assert lines[0].split() == ["TIME", "USER", "ACTION", "RESOURCE", "PROJECT", "DEFINITION", "ENVIRONMENT",
                                "ORIGIN", "OUTCOME"]
    assert lines[1].split()[4:] == ["default", "Secretfile.yml", "prod", origin.process_origin(), "ok"]


def test_an_unknown_environment_exits_1_naming_the_known_ones(here: Project) -> None:
    result = run("sync", "-e", "qa", "--format", "json")
    assert result.exit_code == 1
    assert data(result) == {"error": "environment_not_found",
                            "detail": "Unknown environment 'qa'. Known environments: dev, prod"}


def test_an_unknown_subcommand_suggests_the_closest_and_exits_1(here: Project) -> None:
    result = run("synk")
    assert result.exit_code == 1 and "Did you mean 'sync'?" in result.stderr


def test_an_unknown_flag_suggests_the_closest_and_exits_1(here: Project) -> None:
    result = run("sync", "--dryrun")
    assert result.exit_code == 1 and "Did you mean '--dry-run'?" in result.stderr


def test_a_usage_error_under_format_json_is_an_error_body(here: Project) -> None:
    result = run("sync", "--dryrun", "--format", "json")
    assert (result.exit_code, data(result)["error"]) == (1, "usage")


@pytest.mark.slow
def test_completion_is_offered_by_click(here: Project) -> None:
    result = CliRunner().invoke(cli, [], prog_name="secretsctl",
                                env={"_SECRETSCTL_COMPLETE": "bash_source"})
    assert "_SECRETSCTL_COMPLETE=bash_complete" in result.stdout


def test_no_progress_bar_when_output_is_not_a_terminal(here: Project) -> None:
    result = run("status")
    assert "━" not in result.stderr and "━" not in result.stdout


def test_no_subcommand_prints_the_help_and_exits_0(here: Project) -> None:
    result = run()
    assert result.exit_code == 0 and "Commands:" in result.stdout and "sync" in result.stdout


def test_the_engines_progress_draws_the_bar_on_a_terminal(here: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([0.0, *[5.0] * 100])
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setattr(progress, "clock", lambda: next(readings))
    result = run("sync")
    assert result.exit_code == 0 and "sync" in result.stderr and "2/2" in result.stderr
