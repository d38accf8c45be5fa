"""``secretsctl --addr`` says, prints as JSON and exits what the local mode does, subcommand by
subcommand, on the same project: the local mode reads the files, the service reads them for it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import Result

from tests.cli.remote.conftest import data, invoke
from tests.factories import Project, definition

pytestmark = [pytest.mark.server, pytest.mark.django_db(transaction=True)]

Both = Callable[..., tuple[Result, Result]]
Remote = Callable[..., Result]


def same(local: Result, remote: Result) -> None:
    assert (remote.exit_code, remote.stdout, remote.stderr) == (local.exit_code, local.stdout, local.stderr)


@pytest.fixture
def synced(remote: Remote) -> None:
    assert remote("sync").exit_code == 0


def fresh(project: Project) -> None:
    """The project as before any sync: no lockfile, no target."""
    for lockfile in project.root.glob(".gitsecrets*.lock"):
        lockfile.unlink()
    shutil.rmtree(project.root / "out", ignore_errors=True)


# -- sync ------------------------------------------------------------------------------------------


def test_sync_says_what_the_local_sync_says(remote: Remote, lanes: Project) -> None:
    far = remote("sync")
    fresh(lanes)
    near = invoke("sync")
    same(near, far)


def test_sync_json_is_the_local_json(remote: Remote, lanes: Project) -> None:
    far = remote("sync", "-e", "prod", "--json")
    fresh(lanes)
    near = invoke("sync", "-e", "prod", "--json")
    assert data(far) == data(near) and data(far)["written"]  # which targets took each value, too
    assert far.exit_code == near.exit_code == 0


def test_sync_writes_the_targets_on_the_service(remote: Remote, lanes: Project) -> None:
    assert remote("sync", "-e", "prod").exit_code == 0
    assert (lanes.root / "out/prod-app.json").exists() and (lanes.root / ".gitsecrets.prod.lock").exists()


def test_a_dry_run_says_the_same_and_writes_nothing(both: Both, lanes: Project) -> None:
    same(*both("sync", "--dry-run", "--json"))
    assert not (lanes.root / ".gitsecrets.dev.lock").exists()


def test_sync_of_named_secrets_is_merged_as_locally(remote: Remote, lanes: Project) -> None:
    far = remote("sync", "-s", "api_key", "-s", "db_password")
    fresh(lanes)
    same(invoke("sync", "-s", "api_key", "-s", "db_password"), far)


def test_a_var_file_is_passed_to_the_service(remote: Remote, lanes: Project) -> None:
    assert remote("sync", "-v", "prod.szvar").exit_code == 0
    assert (lanes.root / "out/prod.env").exists()


# -- reads -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("status",), ("status", "--json"), ("status", "-v"),
                                  ("status", "-s", "db_password", "--json"), ("-e", "prod", "status")])
def test_status_is_the_local_status(both: Both, synced: None, args: tuple[str, ...]) -> None:
    same(*both(*args))


def test_status_before_a_sync_is_a_finding_in_both(both: Both) -> None:
    local, remote = both("status")
    same(local, remote)
    assert remote.exit_code == 2


def test_status_of_an_undeclared_secret_is_an_error_in_both(both: Both, synced: None) -> None:
    local, remote = both("status", "-s", "db_pasword")
    same(local, remote)
    assert remote.exit_code == 1 and "db_password" in remote.stderr


@pytest.mark.parametrize("args", [("show", "db_password"), ("show", "db_password", "--json"), ("show", "nosuch")])
def test_show_is_the_local_show(both: Both, synced: None, args: tuple[str, ...]) -> None:
    same(*both(*args))


def test_drift_is_the_local_drift(both: Both, synced: None) -> None:
    local, remote = both("drift", "--json")
    same(local, remote)
    assert remote.exit_code == 0


def test_drift_found_is_exit_2_in_both(both: Both, synced: None, lanes: Project) -> None:
    (lanes.root / "out/dev.env").write_text("db_password=changed-by-hand\n")
    local, remote = both("drift")
    same(local, remote)
    assert remote.exit_code == 2 and "value_changed" in remote.stdout


@pytest.mark.parametrize("args", [("policy",), ("policy", "--fail-on-warning", "--json")])
def test_policy_is_the_local_policy(both: Both, synced: None, args: tuple[str, ...]) -> None:
    same(*both(*args))


def test_rotate_dry_run_is_the_local_check(both: Both, synced: None) -> None:
    same(*both("rotate", "--dry-run", "--json"))


def test_a_forced_rotations_json_is_the_local_json(both: Both, synced: None) -> None:
    local, remote = both("rotate", "db_password", "--force", "--json")
    assert data(remote) == data(local) and data(remote)["written"], remote.stdout


def test_a_forced_rotation_says_what_the_local_one_says(both: Both, synced: None, lanes: Project) -> None:
    before = json.loads((lanes.root / ".gitsecrets.dev.lock").read_text())["secrets"]["db_password"]["hash"]
    local, remote = both("rotate", "db_password", "--force")
    same(local, remote)
    after = json.loads((lanes.root / ".gitsecrets.dev.lock").read_text())["secrets"]["db_password"]
    assert after["hash"] != before and after["rotation_count"] == 2


@pytest.mark.parametrize("args", [("render",), ("render", "--format", "json"), ("-e", "prod", "render"),
                                  ("list", "secrets"), ("list", "secrets", "--filter", "db", "--json"),
                                  ("list", "targets", "-e", "prod"), ("list", "providers", "--json"),
                                  ("list", "variables", "-e", "prod", "--json")])
def test_renders_and_listings_are_the_local_ones(both: Both, args: tuple[str, ...]) -> None:
    same(*both(*args))


def test_render_to_a_file_writes_it_here(remote: Remote, lanes: Project, tmp_path: Path) -> None:
    target = tmp_path / "rendered.yml"
    assert remote("render", "-o", str(target)).exit_code == 0
    assert "db_password" in target.read_text()


def test_validate_sends_the_local_file_to_the_service(both: Both, lanes: Project) -> None:
    local, remote = both("validate", "-f", "Secretfile.yml")
    same(local, remote)
    assert remote.exit_code == 0


def test_an_invalid_definition_is_exit_2_in_both(both: Both, lanes: Project) -> None:
    (lanes.root / "broken.yml").write_text(yaml.safe_dump(
        definition({"name": "x", "kind": "random_password", "targets": "nope"})))
    local, remote = both("validate", "-f", "broken.yml", "--json")
    assert (local.exit_code, remote.exit_code) == (2, 2)
    assert data(remote)["valid"] is False and data(remote)["errors"] == data(local)["errors"]


# -- the audit log -----------------------------------------------------------------------------------


def test_the_audit_row_is_written_by_the_service_under_the_keys_name(remote: Remote, synced: None) -> None:
    rows = data(remote("audit", "-a", "sync", "--json"))["entries"]
    assert [(row["user"], row["action"], row["success"]) for row in rows] == [("service", "sync", True)]


def test_audit_pages_are_the_local_pages(both: Both, synced: None) -> None:
    same(*both("audit", "-a", "sync", "--json"))


# -- what the service cannot do ----------------------------------------------------------------------


@pytest.mark.parametrize("args", [("clean",), ("import",), ("import", "--dry-run")])
def test_subcommands_the_api_does_not_serve_are_refused(remote: Remote, synced: None, lanes: Project,
                                                         args: tuple[str, ...]) -> None:
    before = (lanes.root / ".gitsecrets.dev.lock").read_bytes()
    result = remote(*args)
    assert result.exit_code == 1 and "cannot run against a service" in result.stderr
    assert (lanes.root / ".gitsecrets.dev.lock").read_bytes() == before


def test_a_refusal_is_json_under_json(remote: Remote) -> None:
    result = remote("clean", "--json")
    assert (result.exit_code, data(result)["error"]) == (1, "not_served_remotely")


@pytest.mark.parametrize("args", [("sync", "-f", "Secretfile.yml"), ("status", "-l", "other.lock")])
def test_local_file_flags_are_refused_rather_than_ignored(remote: Remote, lanes: Project,
                                                          args: tuple[str, ...]) -> None:
    result = remote(*args)
    assert result.exit_code == 1 and "with --addr" in result.stderr
    assert not (lanes.root / ".gitsecrets.dev.lock").exists()


def test_the_address_comes_from_secretsctl_addr_too(served: str, local_runs: list[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRETSCTL_ADDR", served)
    assert invoke("sync").exit_code == 0 and local_runs == []
    assert data(invoke("audit", "-a", "sync", "--json"))["entries"][0]["user"] == "service"


def test_validate_refuses_var_files_it_could_not_apply(remote: Remote, lanes: Project) -> None:
    result = remote("validate", "-v", "prod.szvar")
    assert result.exit_code == 1 and "-v and -e are not applied" in result.stderr
