"""GET /secrets and GET /secrets/{secret_name}/status."""

from __future__ import annotations

from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, env_secret, environments, file_secret


def test_list_gives_each_secret_with_kind_period_and_targets(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", rotation_period="90d"), file_secret("tok", kind="uuid")))
    body = authed_api.get("/secrets").json()
    assert body["count"] == 2
    assert body["secrets"] == [
        {"name": "db", "kind": "random_password", "rotation_period": "90d", "targets": ["local/file"]},
        {"name": "tok", "kind": "uuid", "rotation_period": None, "targets": ["local/file"]},
    ]


def test_list_names_every_declared_target_in_order_repeats_included(authed_api: APIClient, project: Project) -> None:
    # SecretZero's listing: `<provider>/<kind>` as written, one per target, not a set of types.
    db = file_secret("db")
    db["targets"] += [
        {"provider": "local", "kind": "file", "config": {"path": "out/b.json"}},
        {"provider": "vault", "kind": "vault_kv", "config": {"path": "app/db"}},
        {"provider": "local", "kind": "file", "config": {"path": "out/c.yaml"}},
    ]
    project.write(definition(db))
    assert authed_api.get("/secrets").json()["secrets"][0]["targets"] == [
        "local/file", "local/file", "vault/vault_kv", "local/file",
    ]


def test_list_names_a_target_by_the_provider_alias_as_written(authed_api: APIClient, project: Project) -> None:
    tok = {"name": "tok", "kind": "random_string",
           "targets": [{"provider": "secrets", "kind": "vault_kv", "config": {"path": "app/tok"}}]}
    project.write(definition(tok, providers={"secrets": {"kind": "vault", "config": {"address": "http://vault"}}}))
    assert authed_api.get("/secrets").json()["secrets"][0]["targets"] == ["secrets/vault_kv"]


def test_list_gives_a_template_secret_its_own_targets_only(authed_api: APIClient, project: Project) -> None:
    template = {
        "fields": {"password": {"generator": {"kind": "random_password"},
                                "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/p.env"}}]}},
        "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/db.json"}}],
    }
    own = {"provider": "local", "kind": "file", "config": {"path": "out/own.yaml"}}
    project.write(definition({"name": "db", "kind": "templates.creds", "targets": [own]},
                             {"name": "bare", "kind": "templates.creds"}, templates={"creds": template}))
    listed = {s["name"]: s["targets"] for s in authed_api.get("/secrets").json()["secrets"]}
    assert listed == {"db": ["local/file"], "bare": []}


def test_list_without_definition_file_is_404(authed_api: APIClient, project: Project) -> None:
    response = authed_api.get("/secrets")
    assert response.status_code == 404
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_list_with_unparseable_definition_is_422_with_error_body(authed_api: APIClient, project: Project) -> None:
    project.write("secrets: [unclosed\n")
    response = authed_api.get("/secrets")
    assert response.status_code == 422
    assert set(response.json()) == {"error", "detail", "timestamp"}


def test_list_with_invalid_rotation_period_names_the_place(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", rotation_period="90x")))
    response = authed_api.get("/secrets")
    assert response.status_code == 422
    assert "secrets[0].rotation_period" in response.json()["detail"]


def test_list_is_audited(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    authed_api.get("/secrets")
    row = AuditEntry.objects.get(action="list_secrets")
    assert (row.resource, row.success, row.details) == ("secrets", True, {"var_files": [], "count": 1})


def test_status_before_sync_carries_only_name_and_exists(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    assert authed_api.get("/secrets/db/status").json() == {"name": "db", "exists": False}


def test_status_of_unknown_secret_is_200_not_404(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    response = authed_api.get("/secrets/ghost/status")
    assert response.status_code == 200
    assert response.json() == {"name": "ghost", "exists": False}


def test_status_after_sync_reports_times_count_and_targets(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    authed_api.post("/sync", {}, format="json")
    body = authed_api.get("/secrets/db/status").json()
    entry = project.lock()["secrets"]["db"]
    assert body == {
        "name": "db", "exists": True, "created_at": entry["created_at"], "updated_at": entry["updated_at"],
        "last_rotated": None, "rotation_count": 0, "targets": ["local/file/out/app.env"],
        "last_change": "generated",
    }


def test_status_with_unreadable_lockfile_is_500(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    project.lockfile.write_text("{not json")
    response = authed_api.get("/secrets/db/status")
    assert response.status_code == 500
    assert "not json" not in response.json()["detail"]


def test_unreadable_lockfile_is_never_overwritten_by_sync(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    project.lockfile.write_text("{not json")
    assert authed_api.post("/sync", {}, format="json").status_code == 500
    assert project.lockfile.read_text() == "{not json"


def test_status_is_audited_per_secret(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db")))
    authed_api.get("/secrets/db/status")
    row = AuditEntry.objects.get(action="get_secret_status")
    assert (row.resource, row.details) == ("secret:db", {"var_files": [], "exists": False})


def test_template_secret_exists_when_all_fields_exist(authed_api: APIClient, project: Project) -> None:
    template = {
        "fields": {
            "username": {"generator": {"kind": "static", "config": {"value": "app"}}},
            "password": {"generator": {"kind": "random_password", "config": {"length": 20}}},
        },
        "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/db.json"}}],
    }
    project.write(definition({"name": "db", "kind": "templates.creds"}, templates={"creds": template}))
    authed_api.post("/sync", {}, format="json")
    body = authed_api.get("/secrets/db/status").json()
    assert body["exists"] is True
    assert set(project.lock()["secrets"]) == {"db.username", "db.password"}


def test_an_edited_definition_is_listed_again(authed_api: APIClient, project: Project) -> None:
    # Every cache on the way (parsed definition, secret list, rendered body) must follow the file.
    project.write(definition(file_secret("alpha")))
    assert [s["name"] for s in authed_api.get("/secrets").json()["secrets"]] == ["alpha"]
    project.write(definition(file_secret("alpha"), file_secret("beta", kind="uuid")))
    assert [s["name"] for s in authed_api.get("/secrets").json()["secrets"]] == ["alpha", "beta"]
    # Same size, same second: only the content (and the file's times) differ.
    project.write(definition(file_secret("gamma"), file_secret("delta", kind="uuid")))
    body = authed_api.get("/secrets").json()
    assert [(s["name"], s["kind"]) for s in body["secrets"]] == [("gamma", "random_password"), ("delta", "uuid")]


def test_an_edited_definition_changes_the_status_lookup(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("alpha")))
    assert authed_api.post("/sync", {}, format="json").status_code == 200
    assert authed_api.get("/secrets/alpha/status").json()["exists"] is True
    project.write(definition(file_secret("alpha", path="out/other.env")))
    assert authed_api.post("/sync", {"force": True}, format="json").json()["secrets_generated"] == ["alpha"]
    assert authed_api.get("/secrets/alpha/status").json()["targets"] == ["local/file/out/other.env"]


# -- var_files, a repeated query parameter -------------------------------------------------


def test_list_renders_the_definition_with_the_var_files_given(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", rotation_period="{{ var.period }}"), variables={"period": "30d"}))
    (project.root / "prod.yml").write_text("period: 90d\n")
    project.declare("prod.yml")
    assert authed_api.get("/secrets").json()["secrets"][0]["rotation_period"] == "30d"
    assert authed_api.get("/secrets?var_files=prod.yml").json()["secrets"][0]["rotation_period"] == "90d"


def test_status_takes_var_files_in_order_and_audits_them(authed_api: APIClient, project: Project) -> None:
    environments(project, env_secret("db")).declare("eu.yml")
    (project.root / "eu.yml").write_text("region: eu\n")
    authed_api.post("/sync", {"var_files": ["prod.yml"]}, format="json")
    body = authed_api.get("/secrets/db/status?var_files=prod.yml&var_files=eu.yml").json()
    assert body["targets"] == ["local/file/out/prod.env"]
    row = AuditEntry.objects.get(action="get_secret_status")
    assert row.details["var_files"] == ["prod.yml", "eu.yml"]


def test_status_var_files_are_404_when_missing_400_outside_the_folder_422_when_too_many(
    authed_api: APIClient, project: Project
) -> None:
    environments(project, env_secret("db")).declare("nope.yml", "../prod.yml")
    assert authed_api.get("/secrets/db/status?var_files=nope.yml").status_code == 404
    assert authed_api.get("/secrets/db/status?var_files=../prod.yml").status_code == 400
    too_many = "&".join(["var_files=prod.yml"] * 65)
    response = authed_api.get(f"/secrets/db/status?{too_many}")
    assert response.status_code == 422 and "var_files" in response.json()["detail"]


def test_status_says_how_the_value_last_changed(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", rotation_period="30d")))
    authed_api.post("/sync", {}, format="json")
    assert authed_api.get("/secrets/db/status").json()["last_change"] == "generated"
    authed_api.post("/sync", {"force": True}, format="json")
    body = authed_api.get("/secrets/db/status").json()
    assert (body["last_change"], body["last_rotated"], body["updated_at"]) == (
        "regenerated", None, project.lock()["secrets"]["db"]["updated_at"])
    authed_api.post("/rotation/execute", {"force": True}, format="json")
    assert authed_api.get("/secrets/db/status").json()["last_change"] == "rotated"


def test_every_status_at_once_is_each_secrets_status_in_definition_order(
        authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db"), file_secret("api", "out/api.env")))
    authed_api.post("/sync", {"secret_name": "db"}, format="json")
    body = authed_api.get("/status").json()
    assert body == {"secrets": [authed_api.get("/secrets/db/status").json(), {"name": "api", "exists": False}],
                    "count": 2}


def test_every_status_at_once_is_one_audit_row(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db"), file_secret("api", "out/api.env")))
    authed_api.get("/status")
    row = AuditEntry.objects.get(action="get_secrets_status")
    assert (row.details["count"], row.details["missing"]) == (2, 2)
    assert not AuditEntry.objects.filter(action="get_secret_status").exists()
