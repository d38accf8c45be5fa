"""The example definition (20 secrets, five formats) through its whole life, by API and by CLI."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tomllib
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.test import APIClient

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "Secretfile.yml"
FILES = ["dev.env", "dev.json", "dev.yaml", "dev.toml", "dev.tfvars"]


@pytest.fixture
def example(tmp_path: Path, settings: Any) -> Path:
    shutil.copy(EXAMPLE, tmp_path / "Secretfile.yml")
    settings.SERVICE_CONFIG = tmp_path / "Secretfile.yml"
    settings.SERVICE_LOCKFILE = None
    return tmp_path


def test_example_lifecycle_through_the_api(authed_api: APIClient, example: Path) -> None:
    sync = authed_api.post("/sync", {}, format="json").json()
    assert len(sync["secrets_generated"]) == 21 and sync["errors"] == []
    for name in FILES:
        path = example / "out" / name
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(json.loads((example / "out/dev.json").read_text())) == 4
    assert len(yaml.safe_load((example / "out/dev.yaml").read_text())) == 4
    assert len(tomllib.loads((example / "out/dev.toml").read_text())) == 4

    names = [s["name"] for s in authed_api.get("/secrets").json()["secrets"]]
    statuses = [authed_api.get(f"/secrets/{name}/status").json() for name in names]
    assert all(s["exists"] for s in statuses) and len(statuses) == 21

    lock = json.loads((example / ".gitsecrets.lock").read_text())
    lock["secrets"]["db_password"]["created_at"] = "2020-01-01T00:00:00+00:00"
    (example / ".gitsecrets.lock").write_text(json.dumps(lock))
    check = authed_api.post("/rotation/check", {}, format="json").json()
    assert check["secrets_overdue"] == ["db_password"]
    rotated = authed_api.post("/rotation/execute", {}, format="json").json()
    assert rotated["rotated"] == ["db_password"]

    policy = authed_api.post("/policy/check", {}, format="json").json()
    assert (policy["compliant"], policy["errors"], policy["warnings"]) == (True, [], [])  # its own SOC2 included

    data = json.loads((example / "out/dev.json").read_text())
    data["db_replica_password"] = "edited by hand"
    (example / "out/dev.json").write_text(json.dumps(data))
    drift = authed_api.post("/drift/check", {}, format="json").json()
    assert drift["secrets_with_drift"] == ["db_replica_password"]
    assert drift["details"][0]["details"]["reason"] == "value_changed"

    actions = {e["action"] for e in authed_api.get("/audit/logs?limit=1000").json()["entries"]}
    assert actions >= {"sync", "list_secrets", "get_secret_status", "check_rotation", "execute_rotation",
                       "check_policy", "check_drift"}
    admin = Client()
    admin.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    page = admin.get("/admin/audit/auditentry/?action=check_drift")
    assert page.status_code == 200 and page.context["cl"].result_count == 1


def run(*args: str) -> int:
    try:
        call_command(*args, stdout=StringIO())
    except CommandError as exc:
        return exc.returncode
    return 0


@pytest.mark.django_db
def test_example_lifecycle_through_the_commands(example: Path) -> None:
    assert run("validate") == 0
    assert run("status") == 2
    assert run("sync") == 0
    assert run("status") == 0
    assert run("rotate") == 0
    assert run("rotate", "--force") == 0
    assert run("policy") == 0
    assert run("drift") == 0
    (example / "out/dev.toml").write_text("# emptied by hand\n")
    assert run("drift") == 2
