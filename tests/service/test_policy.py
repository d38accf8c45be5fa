"""Compliance policies (SOC2, ISO27001) over the definition and the lockfile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from secretsapi.service.policy import check_policies
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace


def _secret(name: str, **given: Any) -> dict[str, Any]:
    file = {"provider": "local", "kind": "file", "config": {"path": "out/app.env", "format": "dotenv"}}
    return {"name": name, "kind": "random_password", "targets": [file], **given}


def _synced(tmp_path: Path, *secrets: dict[str, Any], standard: str = "soc2") -> Workspace:
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump({"version": "1.0", "metadata": {"compliance": [standard]},
                                    "secrets": list(secrets)}, sort_keys=False))
    ws = Workspace(definition_path=path, environ={})
    sync(ws)
    return ws


def test_a_one_time_secret_needs_no_rotation_period_under_soc2(tmp_path: Path) -> None:
    ws = _synced(tmp_path, _secret("bootstrap_token", one_time=True), _secret("db_password", rotation_period="30d"))
    result = check_policies(ws)
    assert (result.compliant, result.errors) == (True, [])


def test_a_secret_that_rotates_still_needs_a_rotation_period_under_soc2(tmp_path: Path) -> None:
    ws = _synced(tmp_path, _secret("bootstrap_token", one_time=True), _secret("db_password"))
    (error,) = check_policies(ws).errors
    assert (error.secret, error.message) == ("db_password", "SOC2: every secret must have a rotation period")


def test_a_one_time_secret_must_still_be_tracked_in_the_lockfile(tmp_path: Path) -> None:
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump({"version": "1.0", "metadata": {"compliance": ["iso27001"]},
                                    "secrets": [_secret("bootstrap_token", one_time=True)]}))
    (error,) = check_policies(Workspace(definition_path=path, environ={})).errors
    assert error.message == "ISO27001: secret is not tracked in the lockfile"
