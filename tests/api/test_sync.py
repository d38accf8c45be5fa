"""POST /sync: the spec's rules 2-5, dry run, single secret, var_files and partial failure."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from datetime import UTC, datetime
from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, app_project, app_values, definition, file_secret


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def env_values(path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Plain KEY=value lines; the tests that use it generate values that need no quoting."""
    values = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key] = value.strip('"')
    return values


def two_secrets(project: Project) -> Project:
    return project.write(
        definition(file_secret("db_password", kind="random_string"), file_secret("api_key", kind="random_hex"))
    )


def test_sync_generates_every_secret_and_writes_targets(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    body = authed_api.post("/sync", {}, format="json").json()
    assert sorted(body["secrets_generated"]) == ["api_key", "db_password"]
    assert body["secrets_skipped"] == [] and body["secrets_failed"] == [] and body["errors"] == []
    values = env_values(project.root / "out/app.env")
    lock = project.lock()["secrets"]
    for name in ("db_password", "api_key"):
        assert lock[name]["hash"] == sha(values[name])
        assert lock[name]["targets"] == {"local/file/out/app.env": sha(values[name])}


def test_new_target_file_and_lockfile_are_mode_0600(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    authed_api.post("/sync", {}, format="json")
    for path in (project.root / "out/app.env", project.lockfile):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path


def test_sync_skips_existing_secrets_unless_forced(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    authed_api.post("/sync", {}, format="json")
    before = project.lock()
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["secrets_generated"] == [] and sorted(body["secrets_skipped"]) == ["api_key", "db_password"]
    assert project.lock() == before


def test_forced_sync_regenerates_without_touching_rotation_metadata(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    authed_api.post("/sync", {}, format="json")
    before = project.lock()["secrets"]["db_password"]
    body = authed_api.post("/sync", {"force": True}, format="json").json()
    after = project.lock()["secrets"]["db_password"]
    assert "db_password" in body["secrets_generated"]
    assert after["hash"] != before["hash"]
    assert after["created_at"] == before["created_at"]
    assert (after["last_rotated"], after["rotation_count"]) == (None, 0)


def test_forced_sync_regenerates_a_one_time_secret(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("token", one_time=True)))
    authed_api.post("/sync", {}, format="json")
    before = project.lock()["secrets"]["token"]["hash"]
    authed_api.post("/sync", {"force": True}, format="json")
    assert project.lock()["secrets"]["token"]["hash"] != before


def test_dry_run_lists_what_would_be_generated_and_writes_nothing(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    body = authed_api.post("/sync", {"dry_run": True}, format="json").json()
    assert sorted(body["secrets_generated"]) == ["api_key", "db_password"]
    assert body["secrets_skipped"] == []
    assert "would be generated" in body["message"]
    assert not project.lockfile.exists()
    assert not (project.root / "out").exists()


def test_dry_run_after_sync_lists_existing_secrets_as_skipped(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    authed_api.post("/sync", {"secret_name": "api_key"}, format="json")
    body = authed_api.post("/sync", {"dry_run": True}, format="json").json()
    assert (body["secrets_generated"], body["secrets_skipped"]) == (["db_password"], ["api_key"])


def test_secret_name_syncs_only_that_secret(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    body = authed_api.post("/sync", {"secret_name": "api_key"}, format="json").json()
    assert body["secrets_generated"] == ["api_key"]
    assert list(project.lock()["secrets"]) == ["api_key"]


def test_unknown_secret_name_is_404(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    response = authed_api.post("/sync", {"secret_name": "nope"}, format="json")
    assert response.status_code == 404
    assert "nope" in response.json()["detail"]


def test_missing_definition_is_404(authed_api: APIClient, project: Project) -> None:
    response = authed_api.post("/sync", {}, format="json")
    assert response.status_code == 404
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_failed_target_does_not_stop_the_others(authed_api: APIClient, project: Project) -> None:
    secret = file_secret("db_password", "good/app.env")
    secret["targets"].append({"provider": "local", "kind": "file", "config": {"path": "blocked/app.env"}})
    project.write(definition(secret, file_secret("other", "blocked/other.env")))
    (project.root / "blocked").write_text("a file where a folder should be")
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["secrets_generated"] == ["db_password"]
    assert body["secrets_failed"] == ["other"]
    assert {(e["secret"], e["target"]) for e in body["errors"]} == {
        ("db_password", "local/file/blocked/app.env"), ("other", "local/file/blocked/other.env"),
    }
    entry = project.lock()["secrets"]["db_password"]
    assert list(entry["targets"]) == ["local/file/good/app.env"]
    assert "other" not in project.lock()["secrets"]


def test_var_files_are_merged_over_variables(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", "out/{{ var.env }}.env"), variables={"env": "dev"}))
    (project.root / "prod.yml").write_text("env: prod\n")
    project.declare("prod.yml")
    authed_api.post("/sync", {"var_files": ["prod.yml"]}, format="json")
    assert (project.root / "out/prod.env").exists()
    assert not (project.root / "out/dev.env").exists()


@pytest.mark.usefixtures("undeclared_var_files")
def test_var_file_outside_the_definition_folder_is_400(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    response = authed_api.post("/sync", {"var_files": ["../../etc/passwd"]}, format="json")
    assert response.status_code == 400
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_missing_var_file_is_404(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    project.declare("nope.yml")
    assert authed_api.post("/sync", {"var_files": ["nope.yml"]}, format="json").status_code == 404


def test_wrong_types_are_422(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    for body in ({"dry_run": "sometimes"}, {"var_files": "x.yml"}, {"secret_name": ["a"]}):
        response = authed_api.post("/sync", body, format="json")
        assert response.status_code == 422, body


def test_sync_is_audited_with_names_not_values(authed_api: APIClient, project: Project) -> None:
    two_secrets(project)
    authed_api.post("/sync", {"dry_run": False}, format="json")
    row = AuditEntry.objects.get(action="sync")
    assert row.success and row.user == "service" and row.resource == "secrets"
    assert sorted(row.details["generated"]) == ["api_key", "db_password"]
    assert row.details["dry_run"] is False


def test_one_sync_writes_the_lockfile_once(authed_api: APIClient, project: Project, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from secretsapi.service.state import lockfile_io

    project.write(definition(*(file_secret(f"s{i}", f"out/f{i % 3}.env") for i in range(30))))
    calls = []
    original = lockfile_io.StagedLockfile.commit

    def counting(self: lockfile_io.StagedLockfile) -> None:
        calls.append(1)
        original(self)

    monkeypatch.setattr(lockfile_io.StagedLockfile, "commit", counting)
    authed_api.post("/sync", {}, format="json")
    assert len(calls) == 1
    assert len(project.lock()["secrets"]) == 30


def test_syncing_one_secret_keeps_the_others_in_a_merge_false_file(authed_api: APIClient, project: Project) -> None:
    def exclusive(name: str) -> dict:  # type: ignore[type-arg]
        secret = file_secret(name, "out/only.json", kind="random_hex")
        secret["targets"][0]["config"]["merge"] = False
        return secret

    project.write(definition(exclusive("a"), exclusive("b")))
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/sync", {"force": True, "secret_name": "a"}, format="json")
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False


def test_template_target_renders_secrets_not_regenerated_in_this_run(authed_api: APIClient, project: Project) -> None:
    (project.root / "app.conf.j2").write_text("db={{ secrets.db }}\napi={{ secrets.api }}\n")
    template_target = {"provider": "local", "kind": "template",
                       "config": {"template_path": "app.conf.j2", "output_path": "out/app.conf"}}
    db = file_secret("db", "out/app.env", kind="random_hex")
    api = file_secret("api", "out/app.env", kind="random_hex")
    api["targets"].append(template_target)
    project.write(definition(db, api))
    authed_api.post("/sync", {"secret_name": "db"}, format="json")
    body = authed_api.post("/sync", {"secret_name": "api"}, format="json").json()
    assert body["errors"] == []
    rendered = (project.root / "out/app.conf").read_text()
    db_hash = project.lock()["secrets"]["db"]["hash"]
    db_line = rendered.splitlines()[0].removeprefix("db=")
    assert sha(db_line) == db_hash
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False


def test_absolute_target_inside_a_configured_root_is_written(
        authed_api: APIClient, project: Project, settings: Any, tmp_path_factory: Any) -> None:
    root = tmp_path_factory.mktemp("srv")
    settings.SERVICE_TARGET_ROOTS = (project.root, root)
    project.write(definition(file_secret("db", str(root / "app" / ".env"))))
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["secrets_generated"] == ["db"] and body["errors"] == []
    assert "db" in env_values(root / "app" / ".env")
    assert list(project.lock()["secrets"]["db"]["targets"]) == [f"local/file/{root}/app/.env"]


def test_a_path_made_absolute_by_a_variable_outside_the_roots_fails_that_target_only(
        authed_api: APIClient, project: Project, tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("outside")
    project.write(definition(
        file_secret("db", "out/app.env"),
        {"name": "api", "kind": "random_password", "targets": [
            {"provider": "local", "kind": "file", "config": {"path": "out/app.env"}},
            {"provider": "local", "kind": "file", "config": {"path": "{{ var.dir }}/.env"}}]},
        variables={"dir": str(outside)},
    ))
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["errors"] == [{
        "secret": "api", "target": f"local/file/{outside}/.env",
        "message": f"path {outside}/.env is outside the allowed target roots (SERVICE_TARGET_ROOTS)"}]
    assert set(env_values(project.root / "out/app.env")) == {"db", "api"}
    assert not (outside / ".env").exists()


def two_copies(project: Project) -> Project:
    secret = file_secret("db", "out/a.env", kind="random_hex")
    secret["targets"].append({"provider": "local", "kind": "file", "config": {"path": "out/b.json", "format": "json"}})
    return project.write(definition(secret))


def test_sync_with_repair_restores_a_missing_target_and_is_audited(authed_api: APIClient, project: Project) -> None:
    two_copies(project)
    authed_api.post("/sync", {}, format="json")
    entry = project.lock()["secrets"]["db"]
    (project.root / "out/a.env").unlink()
    body = authed_api.post("/sync", {"repair": True}, format="json").json()
    assert (body["secrets_repaired"], body["secrets_generated"], body["errors"]) == (["db"], [], [])
    after = project.lock()["secrets"]["db"]
    assert len(after.pop("target_provenance")["local/file/out/a.env"]) == 2  # its first write and the repair
    assert after == {key: value for key, value in entry.items() if key != "target_provenance"}
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False
    row = AuditEntry.objects.filter(action="sync").first()
    assert row is not None and row.details["repair"] is True and row.details["repaired"] == ["db"]


def test_a_plain_sync_writes_a_deleted_target_again(authed_api: APIClient, project: Project) -> None:
    two_copies(project)
    authed_api.post("/sync", {}, format="json")
    (project.root / "out/a.env").unlink()
    body = authed_api.post("/sync", {}, format="json").json()
    assert (body["secrets_repaired"], body["secrets_skipped"], body["errors"]) == (["db"], [], [])
    assert (project.root / "out/a.env").exists()


def test_a_plain_sync_reports_a_changed_target_and_is_audited_as_a_failure(
    authed_api: APIClient, project: Project
) -> None:
    two_copies(project)
    authed_api.post("/sync", {}, format="json")
    (project.root / "out/b.json").write_text('{"db": "other"}')
    body = authed_api.post("/sync", {}, format="json").json()
    assert [(e["secret"], e["target"]) for e in body["errors"]] == [("db", "local/file/out/b.json")]
    assert body["message"].startswith("Sync incomplete: ")
    assert (project.root / "out/b.json").read_text() == '{"db": "other"}'
    row = AuditEntry.objects.filter(action="sync").first()
    assert row is not None and row.success is False


def test_sync_repair_without_a_verified_copy_names_the_secret(authed_api: APIClient, project: Project) -> None:
    two_copies(project)
    authed_api.post("/sync", {}, format="json")
    (project.root / "out/a.env").unlink()
    (project.root / "out/b.json").write_text('{"db": "other"}')
    body = authed_api.post("/sync", {"repair": True}, format="json").json()
    assert body["secrets_repaired"] == []
    assert body["errors"] == [{"secret": "db", "target": "local/file/out/b.json", "message": (
        "holds another value than the lockfile records, and no target holds the recorded one: "
        "import to record the value it holds, or sync with force to generate a new one")}]


def test_sync_repair_must_be_a_boolean(authed_api: APIClient, project: Project) -> None:
    two_copies(project)
    assert authed_api.post("/sync", {"repair": "maybe"}, format="json").status_code == 422


def test_a_sync_in_which_every_secret_failed_is_audited_as_a_failure(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", "blocked/a.env"), file_secret("api", "blocked/b.env")))
    (project.root / "blocked").write_text("a file where a folder should be")
    assert authed_api.post("/sync", {}, format="json").json()["secrets_failed"] == ["db", "api"]
    row = AuditEntry.objects.get(action="sync")
    assert row.success is False and row.details["failed"] == ["db", "api"] and "state" not in row.details


def test_a_partly_failed_sync_is_a_failure_whose_row_keeps_what_succeeded(
    authed_api: APIClient, project: Project
) -> None:
    project.write(definition(file_secret("db", "good/a.env"), file_secret("api", "blocked/b.env")))
    (project.root / "blocked").write_text("a file where a folder should be")
    authed_api.post("/sync", {}, format="json")
    row = AuditEntry.objects.get(action="sync")
    assert row.success is False
    assert (row.details["generated"], row.details["failed"]) == (["db"], ["api"])
    assert [e["secret"] for e in row.details["errors"]] == ["api"]


def test_a_sync_with_a_failed_target_of_a_generated_secret_is_a_failure(
    authed_api: APIClient, project: Project
) -> None:
    secret = file_secret("db", "good/a.env")
    secret["targets"].append({"provider": "local", "kind": "file", "config": {"path": "blocked/a.env"}})
    project.write(definition(secret))
    (project.root / "blocked").write_text("a file where a folder should be")
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["secrets_failed"] == [] and body["errors"]
    assert AuditEntry.objects.get(action="sync").success is False


def test_sync_names_the_source_of_an_imported_value_in_the_body_and_the_audit_row(
    authed_api: APIClient, project: Project, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.SERVICE_DEFINITION_ENV = ("DB",)  # the operator lets definitions read it
    monkeypatch.setenv("DB", "from-the-environment")
    project.write(definition(file_secret("db", "out/a.env")))
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["sources"] == {"db": "env"}
    row = AuditEntry.objects.filter(action="sync").first()
    assert row is not None and row.details["sources"] == {"db": "env"}
    assert "from-the-environment" not in json.dumps(row.details)


def test_a_plain_sync_renders_a_template_output_that_lacks_a_secret_it_renders(
    authed_api: APIClient, project: Project
) -> None:
    project.write(app_project(project.root))
    authed_api.post("/sync", {}, format="json")
    lock = project.lock()
    del lock["secrets"]["postgres_password"]["rendered_outputs"]  # as SecretZero leaves it
    lock["secrets"]["postgres_password"]["updated_at"] = datetime.now(UTC).isoformat()  # a change since the render
    project.save_lock(lock)
    body = authed_api.post("/sync", {}, format="json").json()
    assert (body["errors"], body["secrets_repaired"]) == ([], ["postgres_password"])
    assert project.lock()["secrets"]["postgres_password"]["rendered_outputs"]["local/template/"]["hash"] == (
        hashlib.sha256((project.root / "out/app.conf").read_bytes()).hexdigest())
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False


def test_a_hand_edited_value_with_no_copy_left_names_import_or_a_forced_sync(
    authed_api: APIClient, project: Project
) -> None:
    project.write(app_project(project.root))
    authed_api.post("/sync", {}, format="json")
    env_file = project.root / "out/app.env"
    env_file.write_text(env_file.read_text().replace(app_values(project.root)[0]["session_key"], "d" * 32))
    for body in ({}, {"repair": True}):
        errors = authed_api.post("/sync", body, format="json").json()["errors"]
        assert [(e["secret"], e["target"]) for e in errors] == [("session_key", "local/file/out/app.env")]
        assert errors[0]["message"].endswith("import to record the value it holds, or sync with force to "
                                             "generate a new one")
    forced = authed_api.post("/sync", {"secret_name": "session_key", "force": True}, format="json").json()
    assert forced["secrets_generated"] == ["session_key"] and forced["errors"] == []
    assert authed_api.post("/sync", {}, format="json").json()["errors"] == []
