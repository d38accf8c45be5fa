"""``manage.py backup`` and ``restore``: an install with keys, audit rows, jobs and a lockfile is
backed up, restored into an empty install on other paths (SQLite and PostgreSQL), and the new
install holds every row and file, serves the old named key, and finds no drift."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.processes.live import (
    ROOT,
    LiveServer,
    many_secrets,
    new_pg_database,
    server_env,
    write_definition,
)

pytestmark = pytest.mark.slow
# Made by `migrate` in each install: never backed up, compared by their natural keys elsewhere.
FIXTURE_EXCLUDES = ["-e", "contenttypes", "-e", "auth.permission"]


def install(folder: Path, database_url: str | None) -> dict[str, str]:
    """An install of its own: data folder, definition's folder, database."""
    (folder / "secrets").mkdir(parents=True)
    # Each generates its secret key (the backup carries it to the restored install).
    return server_env(data_dir=folder / "data", config=folder / "secrets" / "Secretfile.yml",
                      database_url=database_url, secret_key=None)


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def rows(env: dict[str, str]) -> list[dict[str, Any]]:
    """Every row of the database (Django's fixture, by model and key), less the restore's own audit row."""
    dumped = manage(env, "dumpdata", "--natural-foreign", "--natural-primary", *FIXTURE_EXCLUDES)
    assert dumped.returncode == 0, dumped.stderr
    objects = json.loads(dumped.stdout)
    restore_rows = {o["pk"] for o in objects if o["model"] == "audit.auditentry" and o["fields"]["action"] == "restore"}
    return sorted((o for o in objects if not (o["model"] == "audit.auditentry" and o["pk"] in restore_rows)
                   and not (o["model"] == "audit.auditmention" and o["fields"]["entry"] in restore_rows)),
                  key=lambda o: (str(o["model"]), str(o.get("pk")), json.dumps(o["fields"], sort_keys=True)))


def files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file() and not path.name.endswith(".lck")}


def populated(folder: Path, database_url: str | None, servers: Callable[..., LiveServer]) -> tuple[dict[str, str], str]:
    """Install A after a sync, a rotation and a drift check (jobs and audit rows), with a named key
    and an admin user; returns its environment and the named key."""
    env = install(folder, database_url)
    write_definition(folder / "secrets", many_secrets(6, files=2))
    live = servers(env, folder / "serve.log")
    assert live.finished("/sync", {})[0] == 200
    assert live.finished("/rotation/execute", {"secret_name": "s0", "force": True})[0] == 200
    assert live.finished("/drift/check", {})[0] == 200
    created = manage(env, "apikey", "create", "backup-reader", "--scope", "read", "--scope", "audit")
    assert created.returncode == 0, created.stderr
    key = next(word for word in created.stdout.split() if word.startswith("sk_"))
    admin = subprocess.run([sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "ops",
                            "--email", "ops@example.com"], cwd=ROOT, env={**env, "DJANGO_SUPERUSER_PASSWORD": "pw-9f"},
                           capture_output=True, text=True, timeout=120, check=False)
    assert admin.returncode == 0, admin.stderr
    live.stop()
    return env, key


@pytest.fixture(scope="module")
def sqlite_install(tmp_path_factory: pytest.TempPathFactory,
                   module_servers: Callable[..., LiveServer]) -> tuple[Path, dict[str, str], str]:
    """Install A on SQLite, populated once for this module's tests: its folder, environment and named
    key. Each test backs it up and reads its rows after its own backup; a backup's audit row is all
    a test adds to it (a refused restore writes nothing, which its test asserts)."""
    folder = tmp_path_factory.mktemp("install") / "a"
    env, key = populated(folder, None, module_servers)
    return folder, env, key


def backup_and_restore(tmp_path: Path, servers: Callable[..., LiveServer], install_a: tuple[Path, dict[str, str], str],
                       url_b: str | None) -> None:
    folder_a, env_a, key = install_a
    archive = tmp_path / "backups" / "a.tar.gz"
    archive.parent.mkdir()
    made = manage(env_a, "backup", str(archive))
    assert made.returncode == 0, made.stderr
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    assert [p.name for p in archive.parent.iterdir()] == ["a.tar.gz"]  # no temp file left

    env_b = install(tmp_path / "b", url_b)
    restored = manage(env_b, "restore", str(archive))
    assert restored.returncode == 0, restored.stderr
    # Every key, audit row (the backup's own included), job, user, schedule and webhook row.
    before, after = rows(env_a), rows(env_b)
    # The job history is the task engine's table (django-tasks' database backend) since the
    # move from django-q2's jobs.Job: the sync and the rotation are in it.
    assert {o["model"] for o in before} >= {"apikeys.apikey", "audit.auditentry", "auth.user",
                                            "django_tasks_database.dbtaskresult"}
    jobs: list[dict[str, Any]] = [o["fields"] for o in before if o["model"] == "django_tasks_database.dbtaskresult"]
    assert {job["args_kwargs"]["kwargs"]["operation"] for job in jobs} >= {"sync", "execute_rotation"}
    assert after == before
    # Every file: the lockfile's entries, the target files, the definition, the secret key.
    assert files(tmp_path / "b" / "secrets") == files(folder_a / "secrets")
    key_a, key_b = (folder / "data" / "secret_key" for folder in (folder_a, tmp_path / "b"))
    assert key_b.read_bytes() == key_a.read_bytes()
    assert json.loads((tmp_path / "b" / "secrets" / ".gitsecrets.lock").read_text())["secrets"]
    drift = manage(env_b, "drift", "--json")
    assert drift.returncode == 0, drift.stdout + drift.stderr
    assert json.loads(drift.stdout)["has_drift"] is False
    # The restored install starts (same secret key as its database's) and knows the named key.
    live = servers(env_b, tmp_path / "b.log")
    live.headers = {"X-API-Key": key}
    status, page = live.call("GET", "/audit/logs?action=backup")
    assert status == 200 and any(row["action"] == "backup" for row in page["entries"])


def test_a_sqlite_install_restores_into_an_empty_one_with_nothing_lost(
        tmp_path: Path, servers: Callable[..., LiveServer], sqlite_install: tuple[Path, dict[str, str], str]) -> None:
    backup_and_restore(tmp_path, servers, sqlite_install, None)


@pytest.fixture
def second_pg_database() -> Iterator[str]:
    """Another new, empty PostgreSQL database (the restored install's), dropped at teardown."""
    with new_pg_database() as url:
        yield url


@pytest.mark.postgres
def test_a_postgresql_install_restores_into_an_empty_one_with_nothing_lost(
        tmp_path: Path, servers: Callable[..., LiveServer], pg_migrated: str, second_pg_database: str) -> None:
    env_a, key = populated(tmp_path / "a", pg_migrated, servers)
    backup_and_restore(tmp_path, servers, (tmp_path / "a", env_a, key), second_pg_database)


def test_a_restore_refuses_an_install_that_holds_data_and_writes_nothing(
        tmp_path: Path, sqlite_install: tuple[Path, dict[str, str], str]) -> None:
    folder_a, env_a, _ = sqlite_install
    archive = tmp_path / "a.tar.gz"
    assert manage(env_a, "backup", str(archive)).returncode == 0
    before = files(folder_a)
    refused = manage(env_a, "restore", str(archive))
    assert refused.returncode == 1 and "this install is not empty (" in refused.stderr
    assert "apikeys.apikey (1)" in refused.stderr
    assert files(folder_a) == before


def test_a_file_in_the_way_stops_the_restore_before_anything_is_written(
        tmp_path: Path, sqlite_install: tuple[Path, dict[str, str], str]) -> None:
    _, env_a, _ = sqlite_install
    archive = tmp_path / "a.tar.gz"
    assert manage(env_a, "backup", str(archive)).returncode == 0
    env_b = install(tmp_path / "b", None)
    (tmp_path / "b" / "secrets" / "Secretfile.yml").write_text("version: '1.0'\nsecrets: []\n")
    refused = manage(env_b, "restore", str(archive))
    assert refused.returncode == 1
    assert f"nothing was restored: {tmp_path / 'b' / 'secrets' / 'Secretfile.yml'} exists with other content" \
        in refused.stderr
    assert [p.name for p in (tmp_path / "b" / "secrets").iterdir()] == ["Secretfile.yml"]
    assert rows(env_b) == []


def test_a_backup_is_never_written_over_a_file_or_through_a_symlink(tmp_path: Path) -> None:
    env = install(tmp_path / "a", None)
    write_definition(tmp_path / "a" / "secrets", many_secrets(1, files=1))
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    link = tmp_path / "link.tar.gz"
    os.symlink(victim, link)
    for target in (victim, link):
        refused = manage(env, "backup", str(target))
        assert refused.returncode == 1 and "already exists: a backup is never written over another file" in \
            refused.stderr
    assert victim.read_text() == "keep me"
