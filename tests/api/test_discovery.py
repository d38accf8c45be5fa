"""GET /generators, /secret-types, /targets and /providers."""

from __future__ import annotations

from rest_framework.test import APIClient

from audit.models import AuditEntry
from tests.factories import Project, definition, file_secret


def test_generators_list_every_kind_with_options_and_defaults(authed_api: APIClient, project: Project) -> None:
    body = authed_api.get("/generators").json()
    kinds = {g["kind"]: g for g in body["generators"]}
    assert set(kinds) >= {"random_password", "random_string", "random_hex", "uuid", "static", "script"}
    assert body["count"] == len(kinds)
    length = next(o for o in kinds["random_password"]["options"] if o["name"] == "length")
    assert length["default"] == 32


def test_secret_types_add_the_definitions_templates(authed_api: APIClient, project: Project) -> None:
    template = {"fields": {"user": {"generator": {"kind": "uuid"}}, "pass": {"generator": {"kind": "random_hex"}}},
                "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/t.json"}}]}
    project.write(definition({"name": "db", "kind": "templates.creds"}, templates={"creds": template}))
    types = {t["kind"]: t for t in authed_api.get("/secret-types").json()["secret_types"]}
    assert types["templates.creds"]["template"] is True
    assert sorted(types["templates.creds"]["fields"]) == ["pass", "user"]
    assert types["uuid"]["template"] is False


def test_secret_types_answer_without_a_definition(authed_api: APIClient, project: Project) -> None:
    body = authed_api.get("/secret-types").json()
    assert body["count"] >= 6


def test_targets_list_kinds_with_config_keys(authed_api: APIClient, project: Project) -> None:
    targets = {t["type"]: t for t in authed_api.get("/targets").json()["targets"]}
    assert {"local/file", "local/template"} <= set(targets)
    assert "path" in {o["name"] for o in targets["local/file"]["config"]}


def test_providers_list_kinds_and_declared_providers_without_credentials(
    authed_api: APIClient, project: Project
) -> None:
    providers = {"vault": {"kind": "vault", "auth": {"kind": "token", "config": {"token": "hvs.s3cr3t"}},
                           "config": {"address": "http://127.0.0.1:8200", "token": "inline-s3cr3t"}}}
    project.write(definition(file_secret("a"), providers=providers))
    response = authed_api.get("/providers")
    body = response.json()
    assert "local" in {p["kind"] for p in body["providers"]}
    declared = body["declared"][0]
    assert (declared["alias"], declared["kind"], declared["auth_kind"]) == ("vault", "vault", "token")
    assert declared["config"]["address"] == "http://127.0.0.1:8200"
    assert b"s3cr3t" not in response.content


def test_discovery_needs_the_key_and_is_audited(api: APIClient, authed_api: APIClient, project: Project) -> None:
    for path in ("/generators", "/secret-types", "/targets", "/providers"):
        assert api.get(path).status_code == 401, path
        assert authed_api.get(path).status_code == 200, path
    assert set(AuditEntry.objects.filter(success=True).values_list("action", flat=True)) == {
        "list_generators", "list_secret_types", "list_targets", "list_providers"}
