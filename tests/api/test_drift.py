"""POST /drift/check: each drift reason, its details, secret_name, errors and the audit row."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, app_project, app_values, definition, env_secret, environments, file_secret

TARGET = "local/file/out/app.env"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def check(client: APIClient, body: dict[str, Any] | None = None) -> Any:
    response = client.post("/drift/check", body or {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def reasons(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(d["secret"], d["details"]["reason"]) for d in body["details"]]


def finding(body: dict[str, Any], secret: str, reason: str) -> Any:
    (item,) = [d for d in body["details"] if d["secret"] == secret and d["details"]["reason"] == reason]
    return item


def two_secrets(client: APIClient, project: Project, *, sync: bool = True) -> Project:
    # random_hex values need no quoting, so a hand edit of the dotenv file stays a plain KEY=value line.
    project.write(definition(file_secret("db", kind="random_hex"), file_secret("api", kind="random_hex")))
    if sync:
        response = client.post("/sync", {}, format="json")
        assert response.status_code == 200 and response.json()["secrets_failed"] == [], response.content
    return project


def rewrite_lines(path: Path, key: str, replacement: str | None) -> None:
    """Replace (or, with None, drop) the line that assigns ``key``, leaving every other line alone."""
    lines = path.read_text().splitlines(keepends=True)
    matching = [i for i, line in enumerate(lines) if line.split("=", 1)[0].strip() == key]
    assert len(matching) == 1, path.read_text()
    if replacement is None:
        del lines[matching[0]]
    else:
        lines[matching[0]] = replacement + "\n"
    path.write_text("".join(lines))


def test_no_drift_right_after_a_sync(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    assert check(authed_api) == {"has_drift": False, "secrets_with_drift": [], "details": []}


def test_hand_edited_value_is_value_changed_with_both_hashes(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    expected = project.lock()["secrets"]["db"]["hash"]
    rewrite_lines(project.root / "out/app.env", "db", "db=edited-by-hand-42")
    body = check(authed_api)
    assert body["has_drift"] is True
    assert body["secrets_with_drift"] == ["db"]
    item = finding(body, "db", "value_changed")
    assert item["details"]["target"] == TARGET
    assert item["details"]["expected_hash"] == expected
    assert item["details"]["actual_hash"] == sha("edited-by-hand-42")
    assert reasons(body) == [("db", "value_changed")]


def test_deleted_target_file_is_target_missing(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    (project.root / "out/app.env").unlink()
    body = check(authed_api)
    assert sorted(reasons(body)) == [("api", "target_missing"), ("db", "target_missing")]
    assert sorted(body["secrets_with_drift"]) == ["api", "db"]
    assert finding(body, "db", "target_missing")["details"]["target"] == TARGET


def test_deleted_key_line_is_target_missing_for_that_secret_only(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    rewrite_lines(project.root / "out/app.env", "api", None)
    body = check(authed_api)
    assert reasons(body) == [("api", "target_missing")]
    assert finding(body, "api", "target_missing")["details"]["target"] == TARGET


def test_secret_never_synced_is_not_generated(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project, sync=False)
    authed_api.post("/sync", {"secret_name": "db"}, format="json")
    body = check(authed_api)
    assert reasons(body) == [("api", "not_generated")]
    assert body["secrets_with_drift"] == ["api"]
    assert finding(body, "api", "not_generated")["details"]["target"] == TARGET


@pytest.mark.parametrize(
    "damage", [{"rotation_count": "x"}, {"hash": "not-a-hex-digest"}, {"targets": ["local/file/out/app.env"]}],
    ids=["rotation_count_not_int", "hash_not_hex", "targets_not_mapping"],
)
def test_corrupted_lockfile_entry_is_reported_while_others_are_checked(
    authed_api: APIClient, project: Project, damage: dict[str, Any]
) -> None:
    two_secrets(authed_api, project)
    data = project.lock()
    data["secrets"]["api"].update(damage)
    project.save_lock(data)
    rewrite_lines(project.root / "out/app.env", "db", "db=edited-by-hand-42")
    body = check(authed_api)
    assert sorted(reasons(body)) == [("api", "corrupted_entry"), ("db", "value_changed")]
    assert finding(body, "db", "value_changed")["details"]["actual_hash"] == sha("edited-by-hand-42")


def test_corrupted_entry_alone_leaves_the_other_secret_clean(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    data = project.lock()
    data["secrets"]["api"]["rotation_count"] = "x"
    project.save_lock(data)
    body = check(authed_api)
    assert reasons(body) == [("api", "corrupted_entry")]
    assert body["secrets_with_drift"] == ["api"]


def test_corrupted_entry_finding_names_the_target_id(authed_api: APIClient, project: Project) -> None:
    # formats.md section 7: `details` always carries `target` (the target id) and the path or name.
    two_secrets(authed_api, project)
    data = project.lock()
    data["secrets"]["api"]["rotation_count"] = "x"
    project.save_lock(data)
    item = finding(check(authed_api), "api", "corrupted_entry")
    assert item["details"]["target"] == TARGET
    assert item["details"]["path"]


def test_target_added_after_sync_is_untracked_target(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    db = file_secret("db", kind="random_hex")
    db["targets"].append({"provider": "local", "kind": "file", "config": {"path": "out/extra.env"}})
    project.write(definition(db, file_secret("api", kind="random_hex")))
    body = check(authed_api)
    item = finding(body, "db", "untracked_target")
    assert item["details"]["target"] == "local/file/out/extra.env"
    assert "extra.env" in item["details"]["path"]
    # The original target still matches: against it, only the changed definition is reported.
    assert {d["details"]["reason"] for d in body["details"] if d["details"]["target"] == TARGET} == {
        "definition_changed"
    }
    assert "api" not in body["secrets_with_drift"]


def test_secret_name_limits_the_check_to_that_secret(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    (project.root / "out/app.env").unlink()
    body = check(authed_api, {"secret_name": "api"})
    assert reasons(body) == [("api", "target_missing")]
    assert body["secrets_with_drift"] == ["api"]


def test_every_finding_carries_target_and_path(authed_api: APIClient, project: Project) -> None:
    project.write(definition(
        file_secret("edited", kind="random_hex"), file_secret("gone", "out/gone.env", kind="random_hex"),
        file_secret("later", "out/later.env", kind="random_hex"),
    ))
    authed_api.post("/sync", {"secret_name": "edited"}, format="json")
    authed_api.post("/sync", {"secret_name": "gone"}, format="json")
    rewrite_lines(project.root / "out/app.env", "edited", "edited=edited-by-hand-42")
    (project.root / "out/gone.env").unlink()
    body = check(authed_api)
    assert sorted(reasons(body)) == [
        ("edited", "value_changed"), ("gone", "target_missing"), ("later", "not_generated"),
    ]
    expected = {"edited": ("local/file/out/app.env", "app.env"), "gone": ("local/file/out/gone.env", "gone.env"),
                "later": ("local/file/out/later.env", "later.env")}
    for item in body["details"]:
        target, file_name = expected[item["secret"]]
        assert item["details"]["target"] == target
        assert isinstance(item["details"]["path"], str) and item["details"]["path"].endswith(file_name)


def test_messages_are_human_readable_sentences(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    rewrite_lines(project.root / "out/app.env", "db", "db=edited-by-hand-42")
    rewrite_lines(project.root / "out/app.env", "api", None)
    body = check(authed_api)
    assert len(body["details"]) == 2
    for item in body["details"]:
        message = item["message"]
        assert isinstance(message, str) and " " in message
        assert message != item["details"]["reason"]
        assert "edited-by-hand-42" not in message


def test_drift_check_never_changes_the_lockfile_or_targets(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    rewrite_lines(project.root / "out/app.env", "db", "db=edited-by-hand-42")
    lock_before = project.lockfile.read_text()
    file_before = (project.root / "out/app.env").read_text()
    check(authed_api)
    assert project.lockfile.read_text() == lock_before
    assert (project.root / "out/app.env").read_text() == file_before


def test_missing_definition_file_is_404(authed_api: APIClient, project: Project) -> None:
    response = authed_api.post("/drift/check", {}, format="json")
    assert response.status_code == 404
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_wrong_secret_name_type_is_422(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    response = authed_api.post("/drift/check", {"secret_name": ["db"]}, format="json")
    assert response.status_code == 422
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_drift_check_without_key_is_401(api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    assert api.post("/drift/check", {}, format="json").status_code == 401


def test_drift_reads_the_targets_the_var_files_render(authed_api: APIClient, project: Project) -> None:
    environments(project, env_secret("db"))
    assert authed_api.post("/sync", {"var_files": ["prod.yml"]}, format="json").status_code == 200
    assert check(authed_api, {"var_files": ["prod.yml"]})["has_drift"] is False
    # Without them the definition says out/dev.env, which the lockfile does not record.
    assert finding(check(authed_api), "db", "untracked_target")["details"]["target"] == "local/file/out/dev.env"


@pytest.mark.parametrize("path", ["/drift/check", "/drift"])
def test_drift_var_files_are_404_when_missing_and_400_outside_the_folder(
    authed_api: APIClient, project: Project, path: str
) -> None:
    environments(project, env_secret("db")).declare("nope.yml", "../prod.yml")
    assert authed_api.post(path, {"var_files": ["nope.yml"]}, format="json").status_code == 404
    assert authed_api.post(path, {"var_files": ["../prod.yml"]}, format="json").status_code == 400


def test_drift_audit_row_records_the_var_files(authed_api: APIClient, project: Project) -> None:
    environments(project, env_secret("db"))
    check(authed_api, {"var_files": ["prod.yml"]})
    assert AuditEntry.objects.get(action="check_drift").details["var_files"] == ["prod.yml"]


def test_drift_check_is_audited(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    rewrite_lines(project.root / "out/app.env", "db", "db=edited-by-hand-42")
    check(authed_api)
    check(authed_api, {"secret_name": "api"})
    rows = list(AuditEntry.objects.filter(action="check_drift").order_by("id"))
    assert [(r.resource, r.success) for r in rows] == [("secrets", True), ("secret:api", True)]
    assert rows[0].details["has_drift"] is True
    assert rows[0].details["secrets_with_drift"] == ["db"]
    assert rows[1].details["has_drift"] is False
    assert all("edited-by-hand-42" not in str(r.details) for r in rows)


def test_a_value_written_in_secretzero_raw_quoting_is_misencoded_not_changed(
        authed_api: APIClient, project: Project) -> None:
    value = 'say "hi" \\n now'  # SecretZero writes KEY="<raw>" with no escaping
    project.write(definition(file_secret("db", kind="static", config={"value": value})))
    authed_api.post("/sync", {}, format="json")
    (project.root / "out/app.env").write_text(f'db="{value}"\n')
    body = check(authed_api)
    assert body["has_drift"] is True
    item = finding(body, "db", "misencoded")
    assert item["details"] == {"reason": "misencoded", "target": TARGET, "path": "out/app.env", "key": "db"}
    assert "misparse" in item["message"]
    assert reasons(body) == [("db", "misencoded")]


def test_another_value_in_secretzero_quoting_is_still_value_changed(
        authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", kind="static", config={"value": 'say "hi" \\n now'})))
    authed_api.post("/sync", {}, format="json")
    (project.root / "out/app.env").write_text('db="say "bye" \\n now"\n')
    assert reasons(check(authed_api)) == [("db", "value_changed")]


def template_secret(project: Project) -> Project:
    (project.root / "app.conf.j2").write_text("password={{ db }}\n")  # SecretZero's bare placeholder
    target = {"provider": "local", "kind": "template",
              "config": {"template_path": "app.conf.j2", "output_path": "out/app.conf"}}
    return project.write(definition({"name": "db", "kind": "random_hex", "targets": [target]}))


def test_a_template_target_secretzero_recorded_under_the_value_hash_is_not_drift(
        authed_api: APIClient, project: Project) -> None:
    template_secret(project)
    authed_api.post("/sync", {}, format="json")
    lock = project.lock()
    entry = lock["secrets"]["db"]
    assert list(entry["targets"]) == ["local/template/"]  # SecretZero's id for an unnamed template
    entry["targets"]["local/template/"] = entry["hash"]  # what SecretZero records there
    project.save_lock(lock)
    assert check(authed_api)["has_drift"] is False
    (project.root / "out/app.conf").unlink()
    assert reasons(check(authed_api)) == [("db", "target_missing")]


def test_a_template_output_edited_behind_our_back_is_still_value_changed(
        authed_api: APIClient, project: Project) -> None:
    template_secret(project)
    authed_api.post("/sync", {}, format="json")
    (project.root / "out/app.conf").write_text("password=edited\n")
    assert reasons(check(authed_api)) == [("db", "value_changed")]


def test_drift_alone_is_a_successful_check(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    rewrite_lines(project.root / "out/app.env", "db", "db=changed")
    assert check(authed_api)["has_drift"] is True
    assert AuditEntry.objects.get(action="check_drift").success is True


def test_a_target_the_check_could_not_read_makes_it_a_failure(authed_api: APIClient, project: Project) -> None:
    two_secrets(authed_api, project)
    target = project.root / "out/app.env"
    target.unlink()
    target.mkdir()
    assert {reason for _, reason in reasons(check(authed_api))} == {"target_unreadable"}
    row = AuditEntry.objects.get(action="check_drift")
    assert row.success is False and row.details["unreadable"] == ["api", "db"]


def test_a_template_output_left_stale_is_reported_under_the_secret_whose_value_it_lacks(
    authed_api: APIClient, project: Project
) -> None:
    project.write(app_project(project.root))
    authed_api.post("/sync", {}, format="json")
    # Another tool rotates postgres_password and leaves app.conf as it was.
    rewrite_lines(project.root / "out/app.env", "postgres_password", f"postgres_password={'e' * 32}")
    lock = project.lock()
    entry = lock["secrets"]["postgres_password"]
    entry["hash"] = entry["targets"][TARGET] = sha("e" * 32)
    entry["updated_at"] = "2099-01-01T00:00:00+00:00"
    project.save_lock(lock)
    body = check(authed_api)
    assert (body["has_drift"], body["secrets_with_drift"]) == (True, ["postgres_password"])
    item = finding(body, "postgres_password", "stale_output")
    assert (item["details"]["target"], item["details"]["path"]) == ("local/template/", "out/app.conf")
    assert app_values(project.root)[1]["postgres"] != "e" * 32
