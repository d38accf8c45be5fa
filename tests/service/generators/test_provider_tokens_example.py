"""examples/provider-tokens.yml, the docs' example of every token kind, syncs as written once its
providers point at the vendors' peers: five tokens created, written, recorded."""

from __future__ import annotations

from pathlib import Path

import yaml

from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace
from tests.factories import lock_entries
from tests.peers.azure_devops_server import ACCESS_TOKEN, AzureDevOpsServer
from tests.peers.github_app_server import GitHubAppServer
from tests.peers.gitlab_tokens_server import GitLabTokenServer

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "provider-tokens.yml"


def test_the_example_creates_every_kind_of_token(
    tmp_path: Path, gitlab: GitLabTokenServer, azdo: AzureDevOpsServer, github_app: GitHubAppServer
) -> None:
    document = yaml.safe_load(EXAMPLE.read_text())
    providers = document["providers"]
    providers["gitlab"]["config"]["url"] = gitlab.url
    providers["gitlab"]["auth"]["config"]["token"] = gitlab.token
    providers["azdo"]["auth"]["config"]["token"] = ACCESS_TOKEN
    providers["azdo"]["config"] = {"url": azdo.url}
    providers["github"]["config"].update(api_url=github_app.url, app_id=github_app.app_id,
                                         installation_id=github_app.installation_id)
    (tmp_path / "github-app.pem").write_text(github_app.private_key_pem)
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    ws = Workspace(definition_path=path, lock_timeout=10)
    result = sync(ws)
    assert result.errors == []
    assert sorted(result.secrets_generated) == sorted(s["name"] for s in document["secrets"])
    kinds = {entry["issued_token"]["kind"] for entry in lock_entries(ws).values()}
    assert kinds == {"gitlab_project_token", "gitlab_group_token", "gitlab_group_service_account", "azdo_pat",
                     "github_pat"}
