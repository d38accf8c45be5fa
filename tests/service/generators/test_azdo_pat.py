"""azdo_pat against the Azure DevOps peer: the PAT lifecycle API with an Entra access token, the
previous token revoked after a rotation, drift of a token revoked out of band, a PAT refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import lock_entries, target, workspace
from tests.peers.azure_devops_server import ACCESS_TOKEN, AzureDevOpsServer


def _workspace(tmp_path: Path, server: AzureDevOpsServer, token: str = ACCESS_TOKEN, **config: Any) -> Workspace:
    provider = {"kind": "azure_devops", "auth": {"kind": "token", "config": {"token": token,
                                                                           "organization": "myorg"}},
                "config": {"url": server.url}}
    secret = {"name": "pipeline_pat", "kind": "azdo_pat",
              "config": {"provider": "azdo", "display_name": "secretzero-pipelines",
                         "scopes": ["vso.build", "vso.variablegroups_read"], **config},
              "targets": [target("local", "file", path="out/azdo.env", format="dotenv")]}
    return workspace(tmp_path, {"azdo": provider}, secret)


def _held(tmp_path: Path) -> str:
    return (tmp_path / "out" / "azdo.env").read_text().strip().split("=", 1)[1].strip('"')


def test_sync_creates_a_pat_with_the_scopes_space_separated(tmp_path: Path, azdo: AzureDevOpsServer) -> None:
    ws = _workspace(tmp_path, azdo, valid_to="2099-01-01T00:00:00Z")
    assert sync(ws).errors == []
    assert azdo.active(_held(tmp_path))
    [made] = azdo.named("secretzero-pipelines")
    assert made["scope"] == "vso.build vso.variablegroups_read"
    record = lock_entries(ws)["pipeline_pat"]["issued_token"]
    assert (record["id"], record["expires_at"][:10]) == (made["authorizationId"], "2099-01-01")


def test_rotation_revokes_the_previous_pat_after_the_new_one_is_written(
    tmp_path: Path, azdo: AzureDevOpsServer
) -> None:
    ws = _workspace(tmp_path, azdo)
    sync(ws)
    old = _held(tmp_path)
    assert execute_rotation(ws, force=True).errors == []
    assert azdo.active(_held(tmp_path)) and not azdo.active(old)


def test_drift_reports_a_pat_revoked_in_azure_devops(tmp_path: Path, azdo: AzureDevOpsServer) -> None:
    ws = _workspace(tmp_path, azdo)
    sync(ws)
    azdo.revoke(azdo.named("secretzero-pipelines")[0]["authorizationId"])
    assert [item.details["reason"] for item in detect_drift(ws).details] == ["token_missing"]


def test_a_pat_as_the_providers_credential_is_refused_as_azure_devops_refuses_it(
    tmp_path: Path, azdo: AzureDevOpsServer
) -> None:
    result = sync(_workspace(tmp_path, azdo, token="plainpersonalaccesstoken"))
    assert result.secrets_failed == ["pipeline_pat"]
    assert "not authenticated (401" in result.errors[0].message


def test_an_unknown_scope_fails_naming_azure_devops_error(tmp_path: Path, azdo: AzureDevOpsServer) -> None:
    result = sync(_workspace(tmp_path, azdo, scopes=["vso.everything"]))
    assert result.secrets_failed == ["pipeline_pat"]
    assert "token creation refused by Azure DevOps (invalidScope)" in result.errors[0].message
