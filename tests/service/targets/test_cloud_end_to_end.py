"""One definition over a dotenv file, SSM, Secrets Manager, Vault KV and a Kubernetes Secret,
driven through the HTTP API and through the management commands against real protocol peers."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi.service.util.hashing import sha256_text
from tests.factories import IDS, every_kind_workspace, lock_entries, stored_values
from tests.peers.kubernetes_server import KubernetesServer
from tests.peers.vault_server import VaultServer


@pytest.fixture
def every_kind(tmp_path: Path, settings: Any, aws: str, vault: VaultServer, kube: KubernetesServer) -> Any:
    ws = every_kind_workspace(tmp_path, aws, vault, kube)
    settings.SERVICE_CONFIG = ws.definition_path
    settings.SERVICE_LOCKFILE = None
    return ws


def test_api_syncs_rotates_and_reports_drift_in_every_store(
    authed_api: APIClient, every_kind: Any, aws: str, vault: VaultServer, kube: KubernetesServer
) -> None:
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["errors"] == [] and len(body["secrets_generated"]) == 4
    first = stored_values(aws, vault, kube)
    lock = lock_entries(every_kind)
    for name, target_id in IDS.items():
        assert lock[name]["targets"][target_id] == sha256_text(first[name])
        assert authed_api.get(f"/secrets/{name}/status").json()["targets"][-1] == target_id  # definition order

    rotated = authed_api.post("/rotation/execute", {"force": True}, format="json").json()
    assert sorted(rotated["rotated"]) == sorted(IDS) and rotated["errors"] == []
    second = stored_values(aws, vault, kube)
    assert all(second[name] != first[name] for name in IDS)
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False

    vault.put("secret", "app/config", {"token": "changed behind our back"})
    kube.delete("apps", "app-secrets")
    drift = authed_api.post("/drift/check", {}, format="json").json()
    reasons = {(d["secret"], d["details"]["reason"]) for d in drift["details"]}
    assert reasons == {("vault_token", "value_changed"), ("k8s_password", "target_missing")}
    assert AuditEntry.objects.filter(action="check_drift").count() == 2


def test_commands_sync_rotate_and_detect_drift_in_every_store(
    every_kind: Any, db: None, aws: str, vault: VaultServer, kube: KubernetesServer
) -> None:
    def run(*args: str) -> int:
        try:
            call_command(*args, stdout=StringIO())
        except CommandError as exc:
            return exc.returncode
        return 0

    assert run("sync") == 0
    first = stored_values(aws, vault, kube)
    assert run("rotate", "--force") == 0
    assert all(stored_values(aws, vault, kube)[name] != first[name] for name in IDS)
    assert run("drift") == 0
    vault.put("secret", "app/config", {"token": "changed"})
    assert run("drift") == 2
