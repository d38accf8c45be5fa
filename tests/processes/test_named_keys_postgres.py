"""Named keys on PostgreSQL: the lookup's own SQL compares dates as the ORM would, and two
``serve`` instances on one database refuse a key right after its revocation."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.processes.live import ROOT, LiveServer, http, many_secrets, run_in_django, server_env, write_definition

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def _apikey(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", "apikey", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


def _statuses(servers: tuple[LiveServer, ...], key: str, calls: int = 8) -> set[int]:
    """Several calls per instance, so each of its workers is likely asked."""
    return {http("GET", server.url + "/secrets", headers={"X-API-Key": key})[0]
            for server in servers for _ in range(calls)}


def test_both_instances_refuse_a_named_key_right_after_it_is_revoked(
    tmp_path: Path, pg_migrated: str, servers: Callable[..., LiveServer]
) -> None:
    definition = write_definition(tmp_path, many_secrets(2, files=1))
    envs = [server_env(data_dir=tmp_path / name, config=definition, database_url=pg_migrated) for name in ("a", "b")]
    pair = tuple(servers(env, tmp_path / f"{name}.log", workers=2) for env, name in zip(envs, "ab", strict=True))
    key = _apikey(envs[0], "create", "ci", "--scope", "read")
    assert _statuses(pair, key) == {200}

    _apikey(envs[0], "revoke", "ci")

    assert _statuses(pair, key) == {401}


# Run by a Django process against the database DATABASE_URL names.
CHECK = """
from datetime import timedelta
from django.utils import timezone
from apikeys import keys
from apikeys.models import ApiKey
key = keys.create("ci", ["read", "audit"]).key
found = keys.resolve(key)
assert found is not None and (found.name, found.scopes) == ("ci", frozenset({"read", "audit"})), found
used = ApiKey.objects.get().last_used
assert used is not None and used.second == 0 and used.microsecond == 0
new = keys.rotate("ci", timedelta(hours=1)).key
assert keys.resolve(key) is not None and keys.resolve(new) is not None
ApiKey.objects.update(previous_until=timezone.now() - timedelta(seconds=1))
assert keys.resolve(key) is None and keys.resolve(new) is not None
ApiKey.objects.update(expires=timezone.now() - timedelta(seconds=1))
assert keys.resolve(new) is None
ApiKey.objects.update(expires=timezone.now() + timedelta(days=1))
assert keys.resolve(new) is not None
keys.revoke("ci")
assert keys.resolve(new) is None
print("keys ok")
"""


def test_the_lookup_reads_scopes_and_compares_dates_on_postgresql(pg_migrated: str, tmp_path: Path) -> None:
    result = run_in_django(pg_migrated, tmp_path, CHECK)
    assert result.returncode == 0 and "keys ok" in result.stdout, result.stderr[-2000:]
