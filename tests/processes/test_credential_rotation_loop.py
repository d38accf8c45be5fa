"""The proof that matters: an application that reads its database credential from the target
file before each connection never fails to connect while the credential rotates 20 times."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from tests.processes.live import postgres_admin_url
from tests.service.credentials.sources import connects, credential_secret, postgres_users, project

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
ROTATIONS = 20
GRACE_SECONDS = 1


@dataclass
class Client:
    """An application: read the file, connect, repeat until stopped (bounded by the caller)."""

    admin: str
    path: Path
    failures: int = 0
    connections: int = 0
    users: set[str] = field(default_factory=set)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            value = json.loads(self.path.read_text())["db"]
            self.users.add(json.loads(value)["username"])
            if connects(self.admin, value):
                self.connections += 1
            else:
                self.failures += 1


def test_a_client_never_fails_to_connect_while_dual_phase_rotation_runs_20_times(tmp_path: Path) -> None:
    admin = postgres_admin_url()
    with postgres_users() as (a, b):
        ws = project(tmp_path, credential_secret("postgres_user", (a, b), grace=f"{GRACE_SECONDS}s"),
                     {"main": admin}, lambda: datetime.now(UTC))  # the real clock: grace is real time
        assert sync(ws).secrets_failed == []
        client = Client(admin, tmp_path / "app.json")
        thread = threading.Thread(target=client.run, daemon=True)
        thread.start()
        rotated = 0
        try:
            for _ in range(ROTATIONS):
                time.sleep(GRACE_SECONDS + 0.05)  # the previous user's grace is over: this run retires it
                result = execute_rotation(ws, force=True)
                assert result.rotated == ["db"], result.errors
                rotated += 1
        finally:
            client.stop.set()
            thread.join(timeout=30)
        assert rotated == ROTATIONS
        assert client.users == {a, b} and client.connections > ROTATIONS
        assert client.failures == 0
