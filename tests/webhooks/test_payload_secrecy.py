"""Payloads name secrets and targets: never a value, and never a hash the lockfile records."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, file_secret
from tests.peers.webhook_receiver import webhook_receiver
from tests.webhooks.support import endpoint
from webhooks.delivery import deliver_due
from webhooks.models import Delivery


@pytest.mark.server
def test_payloads_of_sync_rotation_and_drift_hold_no_value_or_hash(authed_api: APIClient, project: Project,
                                                                 settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    project.write(definition(
        file_secret("db_password", "out/a.json", rotation_period="30d"),
        file_secret("api_key", "out/a.json", kind="random_hex", rotation_period="30d"),
    ))
    values: set[str] = set()
    with webhook_receiver() as receiver:
        endpoint(receiver.url)
        authed_api.post("/sync", {}, format="json")
        values |= set(json.loads((project.root / "out/a.json").read_text()).values())
        project.backdate("db_password", 45)
        authed_api.post("/rotation/execute", {}, format="json")
        values |= set(json.loads((project.root / "out/a.json").read_text()).values())
        (project.root / "out/a.json").write_text(json.dumps({"db_password": "edited-by-hand", "api_key": "x" * 12}))
        authed_api.post("/drift/check", {}, format="json")
        deliver_due()
        bodies = b"".join(r.body for r in receiver.received).decode()
    hashes = set(re.findall(r"[0-9a-f]{64}", project.lockfile.read_text()))
    assert sorted(Delivery.objects.values_list("event", flat=True)) == [
        "drift.detected", "rotation.completed", "sync.completed"]
    assert len(values) == 3 and hashes
    stored = json.dumps(list(Delivery.objects.values_list("payload", flat=True)))
    for text in (stored, bodies):
        assert "db_password" in text and "api_key" in text
        for secret in values | hashes | {"edited-by-hand"}:
            assert secret not in text
