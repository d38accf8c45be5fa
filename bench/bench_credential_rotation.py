"""A client connecting to PostgreSQL with the credential read from its target file, in a loop,
while postgres_user rotates it: failed connections with two users taking turns (dual-phase) and
with one user (single-phase), and what one rotation costs.

    DATABASE_URL=postgres://role-with-CREATEROLE@host/db .venv/bin/python bench/bench_credential_rotation.py \
        [--rotations 20] [--grace 1]

Creates two roles with unique names and drops them at the end (in-process, no server).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
import yaml
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from secretsapi.service.definition.egress import egress_of
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.workspace import Workspace


def connects(admin: str, value: str) -> bool:
    parsed = json.loads(value)
    params = conninfo_to_dict(admin)
    params.update(user=parsed["username"], password=parsed["password"], connect_timeout=5)
    try:
        with psycopg.connect(make_conninfo("", **params)) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError:
        return False
    return True


def run(admin: str, users: tuple[str, ...], rotations: int, grace: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        config: dict[str, Any] = {"connection": "main", "grace_period": f"{int(grace)}s"}
        config.update({"users": list(users)} if len(users) == 2 else {"user": users[0]})
        secret = {"name": "db", "kind": "postgres_user", "config": config,
                  "targets": [{"provider": "local", "kind": "file", "config": {"path": "app.json", "format": "json"}}]}
        (root / "Secretfile.yml").write_text(yaml.safe_dump({"version": "1.0", "secrets": [secret]}))
        ws = Workspace(definition_path=root / "Secretfile.yml", environ={}, clock=lambda: datetime.now(UTC))
        ws = replace(ws, egress=egress_of({}, {}, connections={"main": admin}))
        assert sync(ws).secrets_failed == []
        counts = {"connections": 0, "failed": 0}
        stop = threading.Event()

        def client() -> None:
            while not stop.is_set():
                value = json.loads((root / "app.json").read_text())["db"]
                counts["connections" if connects(admin, value) else "failed"] += 1

        thread = threading.Thread(target=client, daemon=True)
        thread.start()
        took = []
        try:
            for _ in range(rotations):
                time.sleep(grace + 0.05)
                started = time.perf_counter()
                result = execute_rotation(ws, force=True)
                took.append(time.perf_counter() - started)
                assert result.rotated == ["db"], result.errors
        finally:
            stop.set()
            thread.join(timeout=30)
    return {**counts, "rotation_ms": statistics.median(took) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rotations", type=int, default=20)
    parser.add_argument("--grace", type=float, default=1.0, help="seconds")
    args = parser.parse_args()
    admin = os.environ.get("DATABASE_URL") or sys.exit("set DATABASE_URL to a role with CREATEROLE")
    names = tuple(f"bench_cred_{secrets.token_hex(4)}_{i}" for i in range(2))
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
    try:
        print(f"{args.rotations} rotations, grace {args.grace:g}s, one client reading the file before each connection")
        print(f"{'mode':<14}{'connections':>12}{'failed':>8}{'rotation (median)':>20}")
        for mode, users in (("dual-phase", names), ("single-phase", names[:1])):
            figures = run(admin, users, args.rotations, args.grace)
            print(f"{mode:<14}{figures['connections']:>12}{figures['failed']:>8}{figures['rotation_ms']:>17.1f} ms")
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in names:
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


if __name__ == "__main__":
    main()
