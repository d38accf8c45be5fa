"""POST /drift and /policy (aliases) and POST /agent/sync."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret


def synced(api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", "out/a.json", kind="uuid", rotation_period="400d"),
                             metadata={"compliance": ["soc2"]}))
    api.post("/sync", {}, format="json")


def test_drift_alias_answers_like_drift_check(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project)
    (project.root / "out/a.json").write_text('{"db": "changed"}')
    alias = authed_api.post("/drift", {"secret_name": "db"}, format="json")
    checked = authed_api.post("/drift/check", {"secret_name": "db"}, format="json")
    assert alias.status_code == 200 and alias.json() == checked.json()
    assert AuditEntry.objects.filter(action="check_drift").count() == 2


def test_policy_alias_answers_like_policy_check(authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project)
    alias = authed_api.post("/policy", {"fail_on_warning": True}, format="json").json()
    assert alias == authed_api.post("/policy/check", {"fail_on_warning": True}, format="json").json()
    assert alias["compliant"] is False


def test_aliases_need_the_key_and_validate_bodies(api: APIClient, authed_api: APIClient, project: Project) -> None:
    synced(authed_api, project)
    assert api.post("/drift", {}, format="json").status_code == 401
    assert authed_api.post("/policy", {"fail_on_warning": "x"}, format="json").status_code == 422


def test_agent_sync_reports_complete_then_nothing_to_do(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("a", "out/a.env", kind="uuid"), file_secret("b", "out/a.env", kind="uuid")))
    first = authed_api.post("/agent/sync", {}, format="json").json()
    assert first["status"] == "complete"
    assert {(o["secret"], o["outcome"]) for o in first["outcomes"]} == {("a", "generated"), ("b", "generated")}
    lock = project.lockfile.read_bytes()
    second = authed_api.post("/agent/sync", {}, format="json").json()
    assert second["status"] == "nothing_to_do"
    assert {o["outcome"] for o in second["outcomes"]} == {"skipped"}
    assert project.lockfile.read_bytes() == lock


def test_agent_sync_reports_partial_and_failed(authed_api: APIClient, project: Project) -> None:
    ok = file_secret("ok", "good/a.env", kind="uuid")
    ok["targets"].append({"provider": "local", "kind": "file", "config": {"path": "blocked/a.env"}})
    project.write(definition(ok))
    (project.root / "blocked").write_text("not a folder")
    body = authed_api.post("/agent/sync", {}, format="json").json()
    assert body["status"] == "partial"
    assert body["outcomes"][0]["outcome"] == "partial"
    assert body["outcomes"][0]["errors"][0]["target"] == "local/file/blocked/a.env"
    project.write(definition(file_secret("bad", "blocked/b.env", kind="uuid")))
    assert authed_api.post("/agent/sync", {}, format="json").json()["status"] == "failed"


def test_agent_sync_accepts_var_files_and_is_audited(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("a", "out/{{ var.env }}.env", kind="uuid"), variables={"env": "dev"}))
    (project.root / "ci.yml").write_text("env: ci\n")
    project.declare("ci.yml")
    body = authed_api.post("/agent/sync", {"var_files": ["ci.yml"]}, format="json").json()
    assert body["status"] == "complete" and (project.root / "out/ci.env").exists()
    row = AuditEntry.objects.get(action="agent_sync")
    assert row.details["status"] == "complete" and row.details["var_files"] == ["ci.yml"]


@pytest.mark.usefixtures("undeclared_var_files")
def test_agent_sync_var_file_escape_is_400(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("a", kind="uuid")))
    assert authed_api.post("/agent/sync", {"var_files": ["../x.yml"]}, format="json").status_code == 400


def copies_then_loss(api: APIClient, project: Project) -> None:
    secret = file_secret("db", "out/a.env", kind="uuid")
    secret["targets"].append({"provider": "local", "kind": "file", "config": {"path": "out/b.json", "format": "json"}})
    project.write(definition(secret))
    api.post("/agent/sync", {}, format="json")
    (project.root / "out/a.env").unlink()


def test_agent_sync_repairs_broken_targets_by_default(authed_api: APIClient, project: Project) -> None:
    copies_then_loss(authed_api, project)
    body = authed_api.post("/agent/sync", {}, format="json").json()
    assert (body["status"], body["secrets_repaired"]) == ("complete", ["db"])
    assert [(o["secret"], o["outcome"]) for o in body["outcomes"]] == [("db", "repaired")]
    assert (project.root / "out/a.env").exists()
    assert authed_api.post("/agent/sync", {}, format="json").json()["status"] == "nothing_to_do"


def test_agent_sync_with_repair_false_still_writes_a_deleted_target(authed_api: APIClient, project: Project) -> None:
    copies_then_loss(authed_api, project)
    body = authed_api.post("/agent/sync", {"repair": False}, format="json").json()
    assert (body["status"], body["secrets_repaired"]) == ("complete", ["db"])
    assert (project.root / "out/a.env").exists()


def test_agent_sync_with_repair_false_reports_a_changed_target_as_partial(
    authed_api: APIClient, project: Project
) -> None:
    copies_then_loss(authed_api, project)
    authed_api.post("/agent/sync", {}, format="json")
    (project.root / "out/b.json").write_text('{"db": "other"}')
    body = authed_api.post("/agent/sync", {"repair": False}, format="json").json()
    assert body["status"] == "partial"
    assert [(o["secret"], o["outcome"]) for o in body["outcomes"]] == [("db", "partial")]


def test_a_partial_agent_sync_is_audited_as_a_failure_with_what_succeeded(
    authed_api: APIClient, project: Project
) -> None:
    project.write(definition(file_secret("ok", "good/a.env", kind="uuid"), file_secret("bad", "blocked/b.env",
                                                                                         kind="uuid")))
    (project.root / "blocked").write_text("not a folder")
    assert authed_api.post("/agent/sync", {}, format="json").json()["status"] == "partial"
    row = AuditEntry.objects.get(action="agent_sync")
    assert row.success is False
    assert (row.details["generated"], row.details["failed"]) == (["ok"], ["bad"])
    assert [e["secret"] for e in row.details["errors"]] == ["bad"]


def test_a_complete_agent_sync_is_audited_as_a_success(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("ok", "good/a.env", kind="uuid")))
    authed_api.post("/agent/sync", {}, format="json")
    assert AuditEntry.objects.get(action="agent_sync").success is True
