"""POST /rotation/check and POST /rotation/execute: windows, one-time secrets, rules 1-3, errors, audit."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, app_project, app_values, definition, env_secret, environments, file_secret


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def env_values(path: Path) -> dict[str, str]:
    """Plain KEY=value lines; the secrets here are random_hex, whose values need no quoting."""
    values = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip().strip('"')
    return values


def check(client: APIClient, body: dict[str, Any] | None = None) -> Any:
    response = client.post("/rotation/check", body or {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def execute(client: APIClient, body: dict[str, Any] | None = None) -> Any:
    response = client.post("/rotation/execute", body or {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def result_for(body: dict[str, Any], name: str) -> Any:
    (item,) = [r for r in body["results"] if r["name"] == name]
    return item


def synced(client: APIClient, project: Project, *secrets: dict[str, Any]) -> Project:
    project.write(definition(*secrets))
    response = client.post("/sync", {}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["secrets_failed"] == []
    return project


def monthly(name: str = "db", **fields: Any) -> dict[str, Any]:
    return file_secret(name, kind="random_hex", rotation_period="30d", **fields)


# -- check -----------------------------------------------------------------------------------


def test_rotation_check_accepts_an_empty_body(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    response = authed_api.post("/rotation/check", {}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["secrets_checked"] == 1
    assert (body["secrets_due"], body["secrets_overdue"]) == ([], [])
    assert [r["name"] for r in body["results"]] == ["db"]


def test_freshly_synced_secret_is_up_to_date_and_not_due(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    item = result_for(check(authed_api), "db")
    assert (item["status"], item["should_rotate"]) == ("up to date", False)


def test_secret_inside_the_warning_window_is_due_in_a_number_of_days(authed_api: APIClient, project: Project) -> None:
    # 30d period: window = min(7 days, 30 / 10 days) = 3 days; 28 days old leaves 2 days.
    synced(authed_api, project, monthly())
    project.backdate("db", 28)
    body = check(authed_api)
    item = result_for(body, "db")
    assert (item["status"], item["should_rotate"]) == ("due in 2 days", True)
    assert (body["secrets_due"], body["secrets_overdue"]) == (["db"], [])


def test_secret_just_outside_the_warning_window_is_still_up_to_date(authed_api: APIClient, project: Project) -> None:
    # 26 days old: 4 days left, outside the 3-day window of a 30d period (not the 7-day cap).
    synced(authed_api, project, monthly())
    project.backdate("db", 26)
    item = result_for(check(authed_api), "db")
    assert (item["status"], item["should_rotate"]) == ("up to date", False)


def test_secret_past_its_period_is_overdue_by_a_number_of_days(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    project.backdate("db", 40)
    body = check(authed_api)
    item = result_for(body, "db")
    assert (item["status"], item["should_rotate"]) == ("overdue by 10 days", True)
    assert (body["secrets_due"], body["secrets_overdue"]) == ([], ["db"])


def test_secret_without_rotation_period_is_never_due(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, file_secret("static_key", kind="random_hex"))
    project.backdate("static_key", 3000)
    body = check(authed_api)
    assert result_for(body, "static_key")["should_rotate"] is False
    assert (body["secrets_due"], body["secrets_overdue"]) == ([], [])


def test_one_time_secret_is_never_due_however_old(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("bootstrap", one_time=True))
    project.backdate("bootstrap", 400)
    body = check(authed_api)
    assert result_for(body, "bootstrap")["should_rotate"] is False
    assert (body["secrets_due"], body["secrets_overdue"]) == ([], [])


def test_rotation_check_with_secret_name_checks_only_that_secret(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("db"), monthly("api"))
    project.backdate("db", 40)
    project.backdate("api", 40)
    body = check(authed_api, {"secret_name": "api"})
    assert body["secrets_checked"] == 1
    assert [r["name"] for r in body["results"]] == ["api"]
    assert body["secrets_overdue"] == ["api"]


def test_rotation_check_changes_nothing_even_with_dry_run_false(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    project.backdate("db", 40)
    before = project.lockfile.read_text()
    check(authed_api, {"dry_run": False})
    assert project.lockfile.read_text() == before


# -- execute ---------------------------------------------------------------------------------


def test_execute_without_force_rotates_only_due_and_overdue_secrets(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("fresh"), monthly("due"), monthly("late"),
           file_secret("plain", kind="random_hex"))
    project.backdate("due", 28)
    project.backdate("late", 40)
    project.backdate("plain", 3000)
    before = project.lock()["secrets"]
    body = execute(authed_api)
    assert sorted(body["rotated"]) == ["due", "late"]
    assert body["failed"] == []
    after = project.lock()["secrets"]
    for name in ("fresh", "plain"):
        assert after[name] == before[name], name


def test_rotation_sets_last_rotated_and_counts_one_rotation(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    project.backdate("db", 40)
    execute(authed_api)
    entry = project.lock()["secrets"]["db"]
    assert entry["last_rotated"] is not None
    assert entry["rotation_count"] == 1
    status = authed_api.get("/secrets/db/status").json()
    assert status["exists"] is True
    assert (status["last_rotated"], status["rotation_count"]) == (entry["last_rotated"], 1)


def test_rotation_writes_a_new_value_whose_hash_the_lockfile_records(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    old_value = env_values(project.root / "out/app.env")["db"]
    project.backdate("db", 40)
    execute(authed_api)
    new_value = env_values(project.root / "out/app.env")["db"]
    entry = project.lock()["secrets"]["db"]
    assert new_value != old_value
    assert entry["hash"] == sha(new_value)
    assert entry["targets"] == {"local/file/out/app.env": sha(new_value)}


def test_rotated_secret_is_up_to_date_afterwards(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    project.backdate("db", 40)
    execute(authed_api)
    item = result_for(check(authed_api), "db")
    assert (item["status"], item["should_rotate"]) == ("up to date", False)


def test_execute_with_nothing_due_rotates_nothing(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    before = project.lockfile.read_text()
    body = execute(authed_api)
    assert (body["rotated"], body["failed"]) == ([], [])
    assert isinstance(body["message"], str) and body["message"]
    assert project.lockfile.read_text() == before


def test_forced_execute_rotates_every_secret_that_is_not_one_time(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("fresh"), file_secret("plain", kind="random_hex"),
           monthly("bootstrap", one_time=True))
    before = project.lock()["secrets"]
    body = execute(authed_api, {"force": True})
    assert sorted(body["rotated"]) == ["fresh", "plain"]
    after = project.lock()["secrets"]
    for name in ("fresh", "plain"):
        assert after[name]["hash"] != before[name]["hash"]
        assert after[name]["rotation_count"] == 1
    assert after["bootstrap"] == before["bootstrap"]


def test_execute_never_rotates_an_overdue_one_time_secret(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("bootstrap", one_time=True))
    project.backdate("bootstrap", 400)
    before = project.lock()["secrets"]["bootstrap"]
    body = execute(authed_api)
    assert body["rotated"] == []
    assert project.lock()["secrets"]["bootstrap"] == before


def test_named_one_time_secret_is_not_rotated_without_force(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("bootstrap", one_time=True))
    project.backdate("bootstrap", 400)
    before = project.lock()["secrets"]["bootstrap"]
    body = execute(authed_api, {"secret_name": "bootstrap"})
    assert body["rotated"] == []
    assert project.lock()["secrets"]["bootstrap"] == before


def test_named_and_forced_one_time_secret_is_rotated(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("bootstrap", one_time=True))
    before = project.lock()["secrets"]["bootstrap"]
    body = execute(authed_api, {"secret_name": "bootstrap", "force": True})
    assert body["rotated"] == ["bootstrap"]
    after = project.lock()["secrets"]["bootstrap"]
    assert after["hash"] != before["hash"]
    assert after["rotation_count"] == 1 and after["last_rotated"] is not None


def test_execute_with_secret_name_rotates_only_that_secret(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("db"), monthly("api"))
    project.backdate("db", 40)
    project.backdate("api", 40)
    before = project.lock()["secrets"]["db"]
    body = execute(authed_api, {"secret_name": "api"})
    assert body["rotated"] == ["api"]
    assert project.lock()["secrets"]["db"] == before


def test_forced_sync_keeps_rotation_metadata(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    execute(authed_api, {"force": True})
    rotated = project.lock()["secrets"]["db"]
    assert rotated["rotation_count"] == 1
    response = authed_api.post("/sync", {"force": True}, format="json")
    assert response.json()["secrets_generated"] == ["db"]
    after = project.lock()["secrets"]["db"]
    assert after["hash"] != rotated["hash"]
    assert (after["last_rotated"], after["rotation_count"]) == (rotated["last_rotated"], 1)


def test_forced_sync_does_not_reset_an_overdue_rotation(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    project.backdate("db", 40)
    authed_api.post("/sync", {"force": True}, format="json")
    assert project.lock()["secrets"]["db"]["rotation_count"] == 0
    assert check(authed_api)["secrets_overdue"] == ["db"]


# -- errors ----------------------------------------------------------------------------------


def test_unknown_secret_name_is_404_with_the_error_body(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    for path in ("/rotation/check", "/rotation/execute"):
        response = authed_api.post(path, {"secret_name": "ghost"}, format="json")
        assert response.status_code == 404, path
        body = response.json()
        assert set(body) == {"error", "detail", "timestamp"}, path
        assert "ghost" in body["detail"], path


def test_missing_definition_file_is_404(authed_api: APIClient, project: Project) -> None:
    for path in ("/rotation/check", "/rotation/execute"):
        response = authed_api.post(path, {}, format="json")
        assert response.status_code == 404, path
        assert set(response.json()) == {"error", "detail", "timestamp"}, path


def test_wrong_field_types_are_422(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    cases = [
        ("/rotation/execute", {"force": "maybe"}),
        ("/rotation/execute", {"secret_name": ["db"]}),
        ("/rotation/check", {"dry_run": "maybe"}),
        ("/rotation/check", {"secret_name": {"name": "db"}}),
    ]
    for path, body in cases:
        response = authed_api.post(path, body, format="json")
        assert response.status_code == 422, (path, body)
        assert set(response.json()) == {"error", "detail", "timestamp"}, (path, body)


def test_rotation_endpoints_without_key_are_401(api: APIClient, project: Project) -> None:
    project.write(definition(monthly()))
    for path in ("/rotation/check", "/rotation/execute"):
        response = api.post(path, {}, format="json")
        assert response.status_code == 401, path
        assert "WWW-Authenticate" in response.headers, path
    assert not project.lockfile.exists()


# -- var files: a rotation renders the definition with them and never moves a secret --------


def synced_in_prod(client: APIClient, project: Project) -> Project:
    environments(project, env_secret("db", rotation_period="30d"))
    response = client.post("/sync", {"var_files": ["prod.yml"]}, format="json")
    assert response.json()["secrets_generated"] == ["db"], response.content
    return project


def test_rotation_execute_writes_the_targets_the_var_files_render(authed_api: APIClient, project: Project) -> None:
    synced_in_prod(authed_api, project)
    body = execute(authed_api, {"force": True, "var_files": ["prod.yml"]})
    assert body["rotated"] == ["db"]
    assert project.lock()["secrets"]["db"]["rotation_count"] == 1
    assert list(project.lock()["secrets"]["db"]["targets"]) == ["local/file/out/prod.env"]


def test_a_rotation_without_the_var_files_it_was_synced_with_fails_that_secret(
    authed_api: APIClient, project: Project
) -> None:
    synced_in_prod(authed_api, project)
    body = execute(authed_api, {"force": True})
    assert (body["rotated"], body["failed"]) == ([], ["db"])
    message = body["errors"][0]["message"]
    assert "[local/file/out/prod.env]" in message and "[local/file/out/dev.env]" in message
    assert "pass the var files it was synced with (or move it with a forced sync)" in message
    assert not (project.root / "out/dev.env").exists()
    assert project.lock()["secrets"]["db"]["rotation_count"] == 0


def test_rotation_check_says_when_these_var_files_cannot_rotate_a_secret(
    authed_api: APIClient, project: Project
) -> None:
    synced_in_prod(authed_api, project).backdate("db", 40)
    item = result_for(check(authed_api), "db")
    assert item["should_rotate"] is True
    assert item["status"].startswith("overdue by 10 days; rotating would move it: ")
    assert result_for(check(authed_api, {"var_files": ["prod.yml"]}), "db")["status"] == "overdue by 10 days"


@pytest.mark.parametrize("path", ["/rotation/check", "/rotation/execute"])
def test_rotation_var_files_are_404_when_missing_and_400_outside_the_folder(
    authed_api: APIClient, project: Project, path: str
) -> None:
    synced_in_prod(authed_api, project)
    project.declare("nope.yml", "../prod.yml")
    assert authed_api.post(path, {"var_files": ["nope.yml"]}, format="json").status_code == 404
    assert authed_api.post(path, {"var_files": ["../prod.yml"]}, format="json").status_code == 400


def test_rotation_audit_rows_record_the_var_files(authed_api: APIClient, project: Project) -> None:
    synced_in_prod(authed_api, project)
    check(authed_api, {"var_files": ["prod.yml"]})
    execute(authed_api, {"var_files": ["prod.yml"]})
    for action in ("check_rotation", "execute_rotation"):
        assert AuditEntry.objects.get(action=action).details["var_files"] == ["prod.yml"]


# -- audit -----------------------------------------------------------------------------------


def test_rotation_check_is_audited_with_counts(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("db"), monthly("api"))
    project.backdate("db", 28)
    check(authed_api)
    row = AuditEntry.objects.get(action="check_rotation")
    assert (row.resource, row.success, row.user) == ("secrets", True, "service")
    assert (row.details["checked"], row.details["due"]) == (2, 1)


def test_rotation_check_of_one_secret_is_audited_against_that_secret(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    check(authed_api, {"secret_name": "db"})
    row = AuditEntry.objects.get(action="check_rotation")
    assert row.resource == "secret:db"


def test_rotation_execute_is_audited_with_names_not_values(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly("db"), monthly("api"))
    execute(authed_api, {"force": True})
    execute(authed_api, {"secret_name": "db", "force": True})
    rows = list(AuditEntry.objects.filter(action="execute_rotation").order_by("id"))
    assert [(r.resource, r.success) for r in rows] == [("secrets", True), ("secret:db", True)]
    assert sorted(rows[0].details["rotated"]) == ["api", "db"]
    value = env_values(project.root / "out/app.env")["db"]
    assert all(value not in str(r.details) for r in rows)


def test_failed_rotation_request_is_audited_as_a_failure(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project, monthly())
    authed_api.post("/rotation/execute", {"secret_name": "ghost"}, format="json")
    row = AuditEntry.objects.get(action="execute_rotation")
    assert (row.resource, row.success) == ("secret:ghost", False)


def test_a_rotation_that_failed_a_secret_is_audited_as_a_failure(authed_api: APIClient, project: Project) -> None:
    synced_in_prod(authed_api, project)
    assert execute(authed_api, {"force": True})["failed"] == ["db"]
    row = AuditEntry.objects.get(action="execute_rotation")
    assert row.success is False and row.details["failed"] == ["db"] and row.details["rotated"] == []


def test_a_rotation_renders_the_template_outputs_that_use_the_secret_again(
    authed_api: APIClient, project: Project
) -> None:
    project.write(app_project(project.root))
    assert authed_api.post("/sync", {}, format="json").json()["secrets_failed"] == []
    before = app_values(project.root)[1]["postgres"]
    assert execute(authed_api, {"secret_name": "postgres_password", "force": True})["rotated"] == ["postgres_password"]
    env, conf = app_values(project.root)
    assert conf == {"redis": env["redis_password"], "postgres": env["postgres_password"]} and conf["postgres"] != before
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False
