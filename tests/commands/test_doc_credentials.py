"""docs/credentials.md's example, run as a reader pastes it: against the test PostgreSQL server
(its URL for the page's ``ADMIN_URL``), with role names of its own (roles are cluster-wide),
dropped afterwards whatever happened."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from tests.commands.test_doc_shell_blocks import block
from tests.docsession import explain, run_session
from tests.processes.live import ROOT, postgres_admin_url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(not (ROOT / ".venv" / ".installed").exists(), reason="needs this checkout's installed .venv"),
]
PAGE_URL = "postgres://admin:secret@127.0.0.1:5432/postgres"


def test_the_credentials_example_rotates_reports_drift_and_repairs(tmp_path: Path) -> None:
    import psycopg
    from psycopg import sql

    admin = postgres_admin_url()
    tag = secrets.token_hex(4)
    names = {"app_a": f"doc_{tag}_a", "app_b": f"doc_{tag}_b"}
    project = tmp_path / "project"
    project.mkdir()
    (project / ".venv").symlink_to(ROOT / ".venv")
    commands = block("docs/credentials.md", "export ADMIN_URL=").commands
    assert any(PAGE_URL in c.text for c in commands)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "PYTEST_")) and k != "DATABASE_URL"}
    env["SERVICE_DATA_DIR"] = str(tmp_path / "data")
    try:
        ran = run_session(commands, cwd=project, env=env, logs=tmp_path / "logs",
                          replace={PAGE_URL: admin, **names})
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in names.values():
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))
    assert all(r.rc == 0 for r in ran), explain(ran)
    printed = [r.out.strip() for r in ran if r.out.strip()]
    assert printed == ["Valid.", "Sync complete: 1 secret(s) generated, 0 skipped.\n  generated  database",
                       names["app_a"], "Rotated 1 secret(s).\n  rotated  database", names["app_b"],
                       "Drift found.\n  database  credential_rejected: local/file/app.json\nexit code 2",
                       "Sync complete: 0 secret(s) generated, 0 skipped, 1 repaired.\n  repaired   database",
                       "No drift."], explain(ran)
    assert not (project / "rotation-demo").exists()
