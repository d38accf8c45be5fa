"""Two ``serve`` instances sharing one PostgreSQL database, definition and lockfile."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.processes.live import (
    LiveServer,
    many_secrets,
    pg_rows,
    read_lock,
    read_targets,
    server_env,
    sha,
    write_definition,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

SECRETS = 40


def test_concurrent_syncs_and_rotations_from_two_instances_lose_no_update(
    tmp_path: Path, pg_migrated: str, servers: Callable[..., LiveServer]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    definition = write_definition(project, many_secrets(
        SECRETS, files=6, kinds=("random_hex", "random_password"), rotation_period="30d"))
    lockfile = project / ".gitsecrets.lock"
    a, b = (
        # Instances sharing a database share the key that signs the job queue.
        servers(server_env(data_dir=tmp_path / name, config=definition, lockfile=lockfile, database_url=pg_migrated,
                           # Every answer synchronous, however loaded the host: the test counts results.
                           extra={"SERVICE_SECRET_KEY": "two-instances-" + "k" * 40,
                                  "SERVICE_JOB_WAIT_SECONDS": "600"}),
                tmp_path / f"{name}.log", workers=2)
        for name in ("a", "b")
    )
    assert a.call("POST", "/sync", {})[1]["secrets_generated"] == [f"s{i}" for i in range(SECRETS)]

    rng = random.Random(6)
    ops: list[tuple[LiveServer, str, dict[str, Any]]] = []
    for server in (a, b):
        ops += [(server, "/rotation/execute", {"force": True})] * 6
        ops += [(server, "/rotation/execute", {"force": True, "secret_name": f"s{rng.randrange(SECRETS)}"})
                for _ in range(8)]
        ops += [(server, "/sync", {"force": True})] * 4 + [(server, "/sync", {})] * 2
    rng.shuffle(ops)
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda op: (op[1], *op[0].finished(op[1], op[2])), ops))

    assert all(status == 200 for _, status, _ in answers), answers
    rotations = Counter(name for path, _, body in answers if path == "/rotation/execute" for name in body["rotated"])
    troubled = [body for _, _, body in answers
                if body.get("failed") or body.get("secrets_failed") or body.get("errors")]
    assert troubled == [], troubled

    lock = read_lock(lockfile)
    values = read_targets(project)
    assert sorted(values) == sorted(lock) == sorted(f"s{i}" for i in range(SECRETS))
    for name, value in values.items():
        assert lock[name]["hash"] == sha(value), name
        assert list(lock[name]["targets"].values()) == [sha(value)], name
        assert lock[name]["rotation_count"] == rotations[name], name
    for server in (a, b):
        status, drift = server.call("POST", "/drift/check", {})
        assert status == 200 and drift["has_drift"] is False, drift

    failed = pg_rows(pg_migrated, "SELECT action, details FROM audit_auditentry WHERE success IS NOT TRUE")
    assert failed == [], failed
    audit = dict(pg_rows(pg_migrated, "SELECT action, count(*) FROM audit_auditentry WHERE success GROUP BY action"))
    assert audit["execute_rotation"] == sum(1 for path, _, _ in answers if path == "/rotation/execute")
    assert audit["sync"] == 1 + sum(1 for path, _, _ in answers if path == "/sync")
