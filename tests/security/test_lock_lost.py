"""A write that lost its PostgreSQL advisory lock stops before it writes over another instance's.

The attack, as run: two instances share one definition, lockfile and PostgreSQL database, on
separate hosts, so their file locks are not shared (here instance B runs in a mount namespace
where the lock files beside the lockfile are its own). Instance A runs a forced sync of many
secrets; its lock session is terminated while the sync is writing targets; instance B then
rotates ``s00070`` and answers 200. Before the fix A went on, committed its lockfile over B's
entry and logged "Could not release advisory lock" once per lock.

A holds its write still in a first batch of target writes: two Kubernetes Secrets (kinds
sort before local files, and two calls go to the provider's pool) whose answers the peer
holds, while A's thread writes the batch's files. So the session is terminated at a known
point, with more batches to come, and B's rotation lands in one of them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.factories import kube_provider, target
from tests.peers.kubernetes_server import KubernetesServer
from tests.processes.live import LiveServer, pg_rows, read_lock, read_target, server_env, sha, write_definition

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

SECRETS = 300  # five batches of target writes (service.state.value_store.BATCH)
ROTATED = "s00070"  # written in the second batch
FIRST_BATCH_LAST_FILE = "s00061"  # the first batch: the two Kubernetes Secrets, then 62 files
WAIT = 60  # seconds; bounds a hang, never reached when things work


def _definition(project: Path, kube: KubernetesServer) -> Path:
    secrets: list[dict[str, Any]] = [
        {"name": f"k{i}", "kind": "random_string", "config": {"length": 24},
         "targets": [target("k8s", "kubernetes_secret", secret_name=f"gate-{i}")]}
        for i in range(2)
    ]
    secrets += [
        {"name": f"s{i:05d}", "kind": "random_hex",
         "targets": [{"provider": "local", "kind": "file", "config": {"path": f"out/s{i:05d}.env"}}]}
        for i in range(SECRETS)
    ]
    return write_definition(project, {"version": "1.0", "providers": {"k8s": kube_provider(kube.url)},
                                      "secrets": secrets})


def _own_file_locks(project: Path, private: Path) -> tuple[str, ...]:
    """A wrapper giving the server its own lock files beside the shared lockfile: another host's."""
    (private / "targets").mkdir(parents=True)
    (private / "lck").touch()
    script = ('mount --bind "$1" "$2" && mount --bind "$3" "$4" && shift 4 && exec "$@"')
    return ("unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
            str(private / "lck"), str(project / ".gitsecrets.lock.lck"),
            str(private / "targets"), str(project / ".gitsecrets.lock.targets"))


def _value(project: Path, name: str) -> str:
    return read_target(project / "out" / f"{name}.env")[name]


def _terminate_lock_sessions(database_url: str) -> int:
    """pg_terminate_backend of every session holding an advisory lock in the database."""
    with psycopg.connect(database_url, autocommit=True, connect_timeout=10) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM (SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory'"
            " AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS s"
        ).fetchall()
    return sum(1 for (ended,) in rows if ended)


def _wait_until(condition: Callable[[], bool]) -> None:
    end = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < end, "the condition did not come true"
        time.sleep(0.01)


def test_a_forced_sync_whose_lock_session_is_terminated_stops_and_leaves_another_instances_rotation(
    tmp_path: Path, pg_migrated: str, servers: Callable[..., LiveServer]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with KubernetesServer() as kube:
        definition = _definition(project, kube)
        lockfile = project / ".gitsecrets.lock"

        def env(name: str) -> dict[str, str]:
            # Separate hosts: each instance's worker takes only its own instance's jobs.
            return {**server_env(data_dir=tmp_path / name, config=definition, lockfile=lockfile,
                                 database_url=pg_migrated), "SERVICE_JOB_QUEUE": f"host-{name}"}

        a = servers(env("a"), tmp_path / "a.log")
        assert a.call("POST", "/sync", {})[0] == 200
        # B starts once the lock files exist, to put its own over them.
        b = servers(env("b"), tmp_path / "b.log", prefix=_own_file_locks(project, tmp_path / "b-locks"))
        before = read_lock(lockfile)
        first_batch_file = _value(project, FIRST_BATCH_LAST_FILE)

        kube.hold()
        answers: list[tuple[int, Any]] = []
        sync = threading.Thread(target=lambda: answers.append(a.call("POST", "/sync", {"force": True})))
        sync.start()
        try:
            assert kube.wait_in_flight(2)
            _wait_until(lambda: _value(project, FIRST_BATCH_LAST_FILE) != first_batch_file)
            assert _terminate_lock_sessions(pg_migrated) >= 1

            status, rotated = b.call("POST", "/rotation/execute", {"force": True, "secret_name": ROTATED})
            assert (status, rotated["rotated"]) == (200, [ROTATED]), rotated
        finally:
            kube.release()
            sync.join(WAIT)

    status, body = answers[0]
    assert status == 503 and "lost its lock" in body["detail"], body
    lock = read_lock(lockfile)
    assert lock[ROTATED]["hash"] == sha(_value(project, ROTATED)) != before[ROTATED]["hash"]
    assert lock[ROTATED]["rotation_count"] == 1
    # Nothing else of A's sync is recorded, and no file after the batch it was in was written.
    assert {name: entry for name, entry in lock.items() if name != ROTATED} == {
        name: entry for name, entry in before.items() if name != ROTATED}
    last = f"s{SECRETS - 1:05d}"
    assert sha(_value(project, last)) == before[last]["hash"]
    (success, details), = pg_rows(
        pg_migrated, "SELECT success, details FROM audit_auditentry WHERE action = 'sync' ORDER BY id DESC LIMIT 1")
    assert (success, details["error"]) == (False, "lock_lost")
    # What A changed before it stopped: the first batch (two Secrets, 62 files), named for drift.
    assert sorted(details["written_targets"]) == ["k0", "k1", *(f"s{i:05d}" for i in range(62))]
