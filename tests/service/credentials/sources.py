"""Real sources for the credential tests: users on the test PostgreSQL server, named uniquely
(roles are cluster-wide) and dropped afterwards, and projects whose secrets rotate them."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.definition.egress import egress_of
from secretsapi.service.workspace import Workspace
from tests.factories import definition
from tests.processes.live import postgres_admin_url

START = datetime(2026, 1, 1, tzinfo=UTC)


@contextmanager
def postgres_users(count: int = 2) -> Iterator[tuple[str, ...]]:
    """``count`` new LOGIN roles with passwords nobody knows, dropped at the end."""
    import psycopg
    from psycopg import sql

    admin = postgres_admin_url()
    names = tuple(f"sa_cred_{secrets.token_hex(5)}_{i}" for i in range(count))
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
            for name in names:
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                    sql.Identifier(name), sql.Literal(secrets.token_hex(16))))
    except psycopg.errors.InsufficientPrivilege:
        pytest.fail("TEST_DATABASE_URL's role needs CREATEROLE for the credential tests "
                    "(docs/operations.md, 'Tests on PostgreSQL'; .ci/run grants it)")
    try:
        yield names
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
            for name in names:
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


def connects(admin_url: str, value: str) -> bool:
    """Whether the credential ``value`` (the JSON a target holds) logs in to the admin URL's database."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    parsed = json.loads(value)
    params = conninfo_to_dict(admin_url)
    params.update(user=parsed["username"], password=parsed["password"], connect_timeout=5)
    try:
        with psycopg.connect(make_conninfo("", **params)) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError:
        return False
    return True


@dataclass
class Clock:
    now: datetime = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def credential_secret(kind: str, users: Sequence[str], *, name: str = "db", grace: str = "1h",
                      targets: Sequence[str] = ("app.json",), **config: Any) -> dict[str, Any]:
    user_config: dict[str, Any] = {"users": list(users)} if len(users) == 2 else {"user": users[0]}
    return {
        "name": name, "kind": kind, "rotation_period": "30d",
        "config": {"connection": "main", **user_config, "grace_period": grace, **config},
        "targets": [{"provider": "local", "kind": "file", "config": {"path": path, "format": "json"}}
                    for path in targets],
    }


def project(tmp_path: Path, secret: dict[str, Any], connections: dict[str, str],
            clock: Callable[[], datetime]) -> Workspace:
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(secret)))
    ws = Workspace(definition_path=path, environ={}, clock=clock)
    return replace(ws, egress=egress_of({}, {}, connections=connections))


def held(ws: Workspace, target: str = "app.json", key: str = "db") -> str:
    """The value a JSON file target holds (the credential, itself JSON)."""
    value: str = json.loads((ws.definition_path.parent / target).read_text())[key]
    return value


def state(ws: Workspace, key: str = "db") -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(ws.lockfile_path.read_text())["secrets"][key]["credential"]
    return found


@contextmanager
def mariadb_users(admin_url: str, count: int = 2) -> Iterator[tuple[str, ...]]:
    """``count`` new accounts (``'<name>'@'%'``) with passwords nobody knows, dropped at the end."""
    names = tuple(f"sa_cred_{secrets.token_hex(5)}_{i}" for i in range(count))
    with mysql_admin(admin_url) as cursor:
        for name in names:
            cursor.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (name, secrets.token_hex(16)))
    try:
        yield names
    finally:
        with mysql_admin(admin_url) as cursor:
            for name in names:
                cursor.execute("DROP USER IF EXISTS %s@'%%'", (name,))


@contextmanager
def mysql_admin(admin_url: str) -> Iterator[Any]:
    import pymysql

    port = int(admin_url.rsplit(":", 1)[1].strip("/"))
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    try:
        with conn.cursor() as cursor:
            yield cursor
    finally:
        conn.close()


def mariadb_connects(admin_url: str, value: str) -> bool:
    import pymysql

    parsed = json.loads(value)
    port = int(admin_url.rsplit(":", 1)[1].strip("/"))
    try:
        pymysql.connect(host="127.0.0.1", port=port, user=parsed["username"], password=parsed["password"],
                        connect_timeout=5).close()
    except pymysql.err.OperationalError:
        return False
    return True
