"""A project synced by SecretZero 0.14.23 is read as it is and kept unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import COMPAT

NAMES = ["db_password", "api_key", "session_secret", "bootstrap_token"]


@pytest.fixture
def sz(tmp_path: Path, settings: Any) -> Path:
    if not COMPAT.exists():
        pytest.skip(f"{COMPAT} is not beside the project")
    root = tmp_path / "sz"
    shutil.copytree(COMPAT, root)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o700 if path.is_dir() else 0o600)  # the shared copy is read-only
    settings.SERVICE_CONFIG = root / "Secretfile.yml"
    settings.SERVICE_LOCKFILE = None
    return root


def lock(root: Path) -> Any:
    return json.loads((root / ".gitsecrets.lock").read_text())


def test_every_secret_exists_with_the_lockfile_timestamps(authed_api: APIClient, sz: Path) -> None:
    entries = lock(sz)["secrets"]
    for name in NAMES:
        body = authed_api.get(f"/secrets/{name}/status").json()
        assert body["exists"] is True
        assert (body["created_at"], body["updated_at"]) == (entries[name]["created_at"], entries[name]["updated_at"])
        assert body["rotation_count"] == 0
        assert body["targets"] == list(entries[name]["targets"])


def test_no_drift_in_any_target_format(authed_api: APIClient, sz: Path) -> None:
    body = authed_api.post("/drift/check", {}, format="json").json()
    assert body == {"has_drift": False, "secrets_with_drift": [], "details": []}


def test_unforced_sync_is_a_no_op_that_keeps_the_lockfile_byte_for_byte(authed_api: APIClient, sz: Path) -> None:
    before = (sz / ".gitsecrets.lock").read_bytes()
    files = {p.name: p.read_bytes() for p in (sz / "out").iterdir()}
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["secrets_generated"] == [] and sorted(body["secrets_skipped"]) == sorted(NAMES)
    assert (sz / ".gitsecrets.lock").read_bytes() == before
    assert {p.name: p.read_bytes() for p in (sz / "out").iterdir()} == files


def test_forced_sync_of_one_secret_keeps_every_other_key(authed_api: APIClient, sz: Path) -> None:
    before = lock(sz)
    env_before = (sz / "out/dev.env").read_text().splitlines()
    authed_api.post("/sync", {"force": True, "secret_name": "db_password"}, format="json")
    after = lock(sz)
    # The record of the definition is rewritten (synced_at, and who wrote it: sync_identity, as
    # SecretZero rewrites it on every sync), SecretZero's own keys kept.
    rewritten = ("synced_at", "sync_identity")
    assert {k: v for k, v in after["secretfile"].items() if k in before["secretfile"] and k not in rewritten} == {
        k: v for k, v in before["secretfile"].items() if k not in rewritten
    }
    assert after["secretfile"]["sync_identity"]["client"] == "secretsapi"
    for name in NAMES[1:]:
        assert after["secrets"][name] == before["secrets"][name]
    # SecretZero's provenance records are kept, and the write adds one of ours per target (last three kept).
    for target_id, records in before["secrets"]["db_password"]["target_provenance"].items():
        now = after["secrets"]["db_password"]["target_provenance"][target_id]
        assert now[:-1] == records[-2:] and now[-1]["actor"]["client"] == "secretsapi"
    assert after["secrets"]["db_password"]["hash"] != before["secrets"]["db_password"]["hash"]
    env_after = (sz / "out/dev.env").read_text().splitlines()
    assert env_after[1:] == env_before[1:]  # api_key and BOOTSTRAP_TOKEN lines untouched
    assert authed_api.post("/drift/check", {}, format="json").json()["has_drift"] is False


def test_tfvars_comment_survives_a_rewrite(authed_api: APIClient, sz: Path) -> None:
    authed_api.post("/sync", {"force": True, "secret_name": "session_secret"}, format="json")
    assert (sz / "out/dev.tfvars").read_text().startswith("# Written by SecretZero")
