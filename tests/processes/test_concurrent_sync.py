"""``serve --workers 4`` under 200 concurrent single-secret syncs: nothing lost, all audited."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.processes.live import (
    LiveServer,
    many_secrets,
    read_lock,
    read_targets,
    server_env,
    sha,
    sqlite_rows,
    write_definition,
)

SECRETS = 200


@pytest.mark.slow
def test_200_concurrent_syncs_of_different_secrets_all_land_in_the_lockfile_and_the_audit_log(
    tmp_path: Path, servers: Callable[..., LiveServer]
) -> None:
    definition = write_definition(tmp_path, many_secrets(SECRETS, files=8))
    # One key sends them all, 32 at once: the bound on one key's jobs (SERVICE_JOBS_PER_KEY, 8 by
    # default, its 429 tested in tests/security/test_job_queues_live.py) is raised, as this tests
    # the lockfile and the audit log under concurrent writes, not that bound.
    env = server_env(data_dir=tmp_path / "data", config=definition, extra={"SERVICE_JOBS_PER_KEY": str(SECRETS)})
    server = servers(env, tmp_path / "serve.log", workers=4)

    def one(i: int) -> tuple[int, object]:
        return server.finished("/sync", {"secret_name": f"s{i}"})

    with ThreadPoolExecutor(max_workers=32) as pool:
        answers = list(pool.map(one, range(SECRETS)))

    assert [status for status, _ in answers] == [200] * SECRETS, answers
    assert all(body["secrets_generated"] == [f"s{i}"] for i, (_, body) in enumerate(answers))  # type: ignore[index]
    lock = read_lock(tmp_path / ".gitsecrets.lock")  # parses: valid JSON
    values = read_targets(tmp_path)
    assert sorted(lock) == sorted(values) == sorted(f"s{i}" for i in range(SECRETS))
    for name, value in values.items():
        assert lock[name]["hash"] == sha(value), name
        assert list(lock[name]["targets"].values()) == [sha(value)], name
    rows = sqlite_rows(tmp_path / "data" / "service.sqlite3",
                       "SELECT resource, success FROM audit_auditentry WHERE action = 'sync'")
    assert sorted(rows) == sorted((f"secret:s{i}", 1) for i in range(SECRETS))
    status, logs = server.call("GET", "/audit/logs?limit=1000&action=sync")
    assert status == 200 and logs["count"] == SECRETS
