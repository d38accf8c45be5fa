"""Environments as SecretZero 0.14.23 resolves them (environment_resolution.py): ``-e`` /
``environment`` selects a profile whose var files come first, whose lockfile is used and whose
``target_profile`` is merged into every target (provider alias, then target kind); an unknown
one is refused naming the known ones."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi.actions import workspaces
from secretsapi.service.errors import DefinitionInvalid, EnvironmentNotFound
from tests.cli.conftest import lane_definition
from tests.factories import Project

pytestmark = pytest.mark.django_db


def test_a_named_environment_uses_its_lockfile_var_files_and_target_profile(lanes: Project) -> None:
    ws = workspaces.workspace(environment="prod")
    assert ws.lockfile_path == lanes.root / ".gitsecrets.prod.lock"
    secret = ws.definition().secret("db_password")
    assert ws.definition().var_files == ("prod.szvar",)
    # The provider override moved the path; the kind override, merged after it, set the format.
    assert dict(secret.targets[0].config) == {"path": "out/prod-app.json", "format": "json"}


def test_no_environment_is_the_default_one(lanes: Project) -> None:
    ws = workspaces.workspace()
    assert ws.lockfile_path == lanes.root / ".gitsecrets.dev.lock"
    assert dict(ws.definition().secret("db_password").targets[0].config) == {"path": "out/dev.env",
                                                                             "format": "dotenv"}


def test_an_unknown_environment_names_the_known_ones(lanes: Project) -> None:
    with pytest.raises(EnvironmentNotFound) as raised:
        workspaces.workspace(environment="qa").definition()
    assert raised.value.message == "Unknown environment 'qa'. Known environments: dev, prod"


def test_an_environment_without_an_environments_block_is_refused(project: Project) -> None:
    project.write({"version": "1.0", "secrets": []})
    with pytest.raises(EnvironmentNotFound, match="no top-level environments map"):
        workspaces.workspace(environment="prod").definition()


def test_a_lane_naming_a_missing_target_profile_is_an_invalid_definition(lanes: Project) -> None:
    doc = lane_definition()
    doc["target_profiles"].pop("files_prod")
    lanes.write(doc)
    with pytest.raises(DefinitionInvalid, match=r"environments\.profiles\.prod\.target_profile: no target profile"):
        workspaces.workspace().definition()


def test_sync_in_prod_writes_prod_targets_and_lockfile_only(authed_api: APIClient, lanes: Project) -> None:
    body = authed_api.post("/sync", {"environment": "prod"}, format="json").json()
    assert sorted(body["secrets_generated"]) == ["api_key", "db_password"]
    assert sorted(json.loads((lanes.root / "out/prod-app.json").read_text())) == ["api_key", "db_password"]
    assert not (lanes.root / ".gitsecrets.dev.lock").exists() and not (lanes.root / "out/prod.env").exists()
    entries = json.loads((lanes.root / ".gitsecrets.prod.lock").read_text())["secrets"]
    assert list(entries["db_password"]["targets"]) == ["local/file/out/prod-app.json"]


def test_the_environment_is_in_the_audit_row(authed_api: APIClient, lanes: Project) -> None:
    authed_api.post("/sync", {"environment": "prod", "dry_run": True}, format="json")
    assert AuditEntry.objects.get(action="sync").details["environment"] == "prod"


def test_a_get_reads_the_environment_named_in_its_query(authed_api: APIClient, lanes: Project) -> None:
    authed_api.post("/sync", {"environment": "prod"}, format="json")
    prod = authed_api.get("/secrets/db_password/status?environment=prod").json()
    dev = authed_api.get("/secrets/db_password/status").json()
    assert (prod["exists"], prod["targets"], dev["exists"]) == (True, ["local/file/out/prod-app.json"], False)


@pytest.mark.parametrize(("method", "path", "body"), [
    ("post", "/sync", {"environment": "qa"}),
    ("post", "/drift/check", {"environment": "qa"}),
    ("post", "/rotation/check", {"environment": "qa"}),
    ("post", "/policy/check", {"environment": "qa"}),
    ("post", "/config/render", {"environment": "qa"}),
    ("get", "/secrets?environment=qa", None),
    ("get", "/providers?environment=qa", None),
])
def test_an_unknown_environment_is_a_404_naming_the_known_ones(
    authed_api: APIClient, lanes: Project, method: str, path: str, body: Any
) -> None:
    response = getattr(authed_api, method)(path, body, format="json") if body else authed_api.get(path)
    assert response.status_code == 404
    assert response.json()["detail"] == "Unknown environment 'qa'. Known environments: dev, prod"


def test_environment_must_be_a_string(authed_api: APIClient, lanes: Project) -> None:
    assert authed_api.post("/sync", {"environment": 3}, format="json").status_code == 422


def test_render_applies_the_environment(authed_api: APIClient, lanes: Project) -> None:
    config = authed_api.post("/config/render", {"environment": "prod"}, format="json").json()["config"]
    assert config["variables"]["env"] == "prod"
    assert config["secrets"][0]["targets"][0]["config"] == {"path": "out/prod-app.json", "format": "json"}


def test_management_commands_take_e(lanes: Project) -> None:
    out = StringIO()
    call_command("sync", "-e", "prod", "--json", stdout=out)
    assert sorted(json.loads(out.getvalue())["secrets_generated"]) == ["api_key", "db_password"]
    assert (lanes.root / ".gitsecrets.prod.lock").exists() and not (lanes.root / ".gitsecrets.dev.lock").exists()
