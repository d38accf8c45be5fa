"""The operator's rule for the server's credentials belongs to one operation (issue 36): each
workspace carries its own into its definition and every TargetContext, so two operations in one
process (threads of a gunicorn gthread worker, the job worker's runners) never see each other's
rule, even on the same definition file and while both are in flight."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from secretsapi.service import Egress, Workspace, sync
from secretsapi.service.definition.egress import READ_SETTING
from secretsapi.service.targets import TargetContext
from tests.peers.vault_server import VaultServer
from tests.service.targets.conftest import clean_sdk_env, vault  # noqa: F401 (fixtures)

TEAM_A = Egress(read_prefixes={"vault/vault_kv": ("secret/team-a/",)})


def _copying(folder: Path, egress: Egress) -> Workspace:
    """A definition copying team A's seed out of the server's Vault into a local file."""
    folder.mkdir(exist_ok=True)
    source = {"kind": "provider_read",
              "config": {"provider": "vault", "kind": "vault_kv", "read": {"path": "team-a/seed", "key": "password"}}}
    document = {"version": "1.0", "providers": {"vault": {"kind": "vault"}},
                "secrets": [{"name": "copy", "kind": "random_string", "source": source,
                             "targets": [{"provider": "local", "kind": "file", "config": {"path": "copy.env"}}]}]}
    (folder / "Secretfile.yml").write_text(yaml.safe_dump(document))
    return Workspace(definition_path=folder / "Secretfile.yml", lock_timeout=10, egress=egress)


def test_each_workspace_carries_its_rule_to_its_targets(tmp_path: Path) -> None:
    allowed, default = _copying(tmp_path, TEAM_A), _copying(tmp_path, Egress())

    assert TargetContext.of(allowed.definition()).egress == TEAM_A
    assert TargetContext.of(default.definition()).egress == Egress()


@pytest.fixture
def servers_vault(vault: VaultServer, monkeypatch: pytest.MonkeyPatch) -> VaultServer:  # noqa: F811
    monkeypatch.setenv("VAULT_ADDR", vault.url)
    monkeypatch.setenv("VAULT_TOKEN", vault.token)
    vault.put("secret", "team-a/seed", {"password": "team-a-seed"})
    return vault


def test_two_operations_in_flight_in_two_threads_each_use_their_own_rule(
    tmp_path: Path, servers_vault: VaultServer,
) -> None:
    allowed, refused = _copying(tmp_path / "a", TEAM_A), _copying(tmp_path / "b", Egress())
    servers_vault.hold()
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(sync, allowed)
        assert servers_vault.wait_in_flight(1)  # the allowed read is under way, under its rule
        second = pool.submit(sync, refused).result(timeout=30)  # the other runs to its end meanwhile
        servers_vault.release()
        done = first.result(timeout=30)

    assert done.errors == []
    assert (tmp_path / "a/copy.env").read_text() == "copy=team-a-seed\n"
    [error] = second.errors
    assert READ_SETTING in error.message
    assert not (tmp_path / "b/copy.env").exists()
