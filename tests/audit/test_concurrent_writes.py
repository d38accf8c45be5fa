"""Audit writes from several processes, each with several threads, into one SQLite file (the
embedded default, as gunicorn's workers share it): every row is written, none fails with
"database is locked", also beside transactions that read before they write (key rotation)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes.live import ROOT, migrated_sqlite, sqlite_rows

PROCESSES, THREADS, ROUNDS = 3, 3, 15

SETUP = """
from apikeys import keys
for p in range({processes}):
    keys.create(f"k{{p}}", ["read"], actor="test")
"""

# Per thread and round: a sync's started row completed with the secrets it names (a transaction),
# a status read's row (one statement), a failed-authentication tally (an upsert), and a key
# rotation (a transaction that reads the key's row, then writes it, then records its row).
WRITER = """
import json, sys, threading
from datetime import datetime, timezone
from django.db import connection
from apikeys import keys
from audit.recorder import begin, finish, record, tally
P = int(sys.argv[-1])
errors = []

def work(t):
    try:
        for i in range({rounds}):
            row = begin(action="sync", resource="secrets", user=f"p{{P}}t{{t}}")
            finish(row, success=True, details={{"generated": [f"p{{P}}t{{t}}r{{i}}a", f"p{{P}}t{{t}}r{{i}}b"]}})
            record(action="get_secret_status", resource=f"secret:s{{i}}", user=f"p{{P}}t{{t}}", success=True)
            tally(key="authenticate:wrong:shared", at=datetime.now(timezone.utc), action="authenticate",
                  resource="/health", user=None, details={{"reason": "wrong"}})
            keys.rotate(f"k{{P}}", actor=f"p{{P}}t{{t}}")
    except Exception as exc:
        errors.append(repr(exc))
    finally:
        connection.close()

threads = [threading.Thread(target=work, args=(t,)) for t in range({threads})]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(120)
print(json.dumps(errors))
"""


def _django(data_dir: Path, db: Path, code: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    env.update(DATABASE_URL=f"sqlite:///{db}", SERVICE_DATA_DIR=str(data_dir),
               DJANGO_SETTINGS_MODULE="project.settings")
    # The code comes on stdin; the process's number is its last argument.
    return subprocess.Popen([sys.executable, "-c",
                             "import django, sys; django.setup(); exec(sys.stdin.read())", *args],
                            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _run(proc: subprocess.Popen[str], code: str) -> str:
    out, err = proc.communicate(code, timeout=240)
    assert proc.returncode == 0, err[-2000:]
    return out


@pytest.mark.slow
def test_processes_and_threads_writing_audit_rows_lose_none_and_never_find_the_database_locked(
    tmp_path: Path,
) -> None:
    db = tmp_path / "service.sqlite3"
    migrated_sqlite(db)
    _run(_django(tmp_path, db, ""), SETUP.format(processes=PROCESSES))

    code = WRITER.format(rounds=ROUNDS, threads=THREADS)
    writers = [_django(tmp_path, db, code, str(p)) for p in range(PROCESSES)]
    errors = [error for proc in writers for error in json.loads(_run(proc, code).strip().splitlines()[-1])]

    assert errors == []
    each = PROCESSES * THREADS * ROUNDS
    counts = dict(sqlite_rows(db, "SELECT action, count(*) FROM audit_auditentry GROUP BY action"))
    assert counts == {"sync": each, "get_secret_status": each, "apikey_rotate": each,
                      "apikey_create": PROCESSES, "authenticate": 1}
    assert sqlite_rows(db, "SELECT count(*) FROM audit_auditentry WHERE action = 'sync' AND success") == [(each,)]
    tallied = sqlite_rows(db, "SELECT json_extract(details, '$.count') FROM audit_auditentry "
                              "WHERE action = 'authenticate'")
    assert tallied == [(each,)]
    mentions = sqlite_rows(db, "SELECT count(*) FROM audit_auditmention m JOIN audit_auditentry e "
                               "ON e.id = m.entry_id WHERE e.action = 'sync'")
    assert mentions == [(2 * each,)]


# A thread ending failed rotations (each outcome commits with its webhook event and its count, in
# one transaction) beside threads writing refusals' rows, as a job worker beside the API does.
OUTCOMES = """
import json, sys, threading
from django.db import connection
from audit.recorder import record
from secretsapi.actions.auditing import audited
from secretsapi.service.errors import SecretNotDefined
errors = []

def rotate():
    try:
        for i in range({rounds}):
            try:
                with audited("execute_rotation", "secrets", "job", {{"force": False}}, changes=True):
                    raise SecretNotDefined("x")
            except SecretNotDefined:
                pass
    except Exception as exc:
        errors.append(repr(exc))
    finally:
        connection.close()

def refuse(t):
    try:
        for i in range({rounds}):
            record(action="request_refused", resource="/rotation/execute", user=f"t{{t}}", success=False,
                   details={{"status": 400}})
    except Exception as exc:
        errors.append(repr(exc))
    finally:
        connection.close()

threads = [threading.Thread(target=rotate), *(threading.Thread(target=refuse, args=(t,)) for t in range(2))]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(120)
print(json.dumps(errors))
"""


@pytest.mark.slow
def test_an_outcome_committed_with_its_events_never_deadlocks_with_other_audit_writers(tmp_path: Path) -> None:
    """The outcome's transaction takes the audit gate before SQLite's write lock, like every writer:
    the other order held the write lock while waiting for the gate, whose holder waited for the
    write lock, and that writer failed with "database is locked" after the 20 s busy timeout."""
    db = tmp_path / "service.sqlite3"
    migrated_sqlite(db)

    code = OUTCOMES.format(rounds=ROUNDS * 4)
    assert json.loads(_run(_django(tmp_path, db, code, "0"), code).strip().splitlines()[-1]) == []
    counts = dict(sqlite_rows(db, "SELECT action, count(*) FROM audit_auditentry GROUP BY action"))
    assert counts == {"execute_rotation": ROUNDS * 4, "request_refused": 2 * ROUNDS * 4}
    assert sqlite_rows(db, "SELECT count(*) FROM audit_auditentry WHERE json_extract(details, '$.state') "
                           "= 'started'") == [(0,)]
