"""Several instances on PostgreSQL: one due tick is queued exactly once.

Three processes run the scheduler's pass (what every worker does every beat) while the test
holds the schedule's row lock, so all three are waiting for it at once; when the lock is released
they take it in turn, and only the first still finds the tick due (its conditional update).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.processes.live import ROOT, pg_rows, run_in_django

pytestmark = pytest.mark.postgres

SETUP = """
from datetime import timedelta
from django.utils import timezone
from jobs import schedules
from jobs.models import Schedule
schedules.install()
Schedule.objects.exclude(name="rotation").delete()
Schedule.objects.update(last_tick=timezone.now() - timedelta(hours=3))
print("ready")
"""
TICK = "from jobs import schedules; from secretsapi import operations; print(schedules.due(operations.enqueue))"


def test_three_instances_queue_a_due_tick_exactly_once(pg_migrated: str, tmp_path: Path) -> None:
    setup = run_in_django(pg_migrated, tmp_path, SETUP)
    assert "ready" in setup.stdout, setup.stderr[-2000:]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(DATABASE_URL=pg_migrated, SERVICE_DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="project.settings")
    with psycopg.connect(pg_migrated, connect_timeout=10) as holder:
        holder.execute("SELECT name FROM jobs_schedule FOR UPDATE").fetchall()
        ticks = [subprocess.Popen([sys.executable, "manage.py", "shell", "-c", TICK], cwd=ROOT, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
        try:
            deadline = time.monotonic() + 60
            while _waiting(pg_migrated) < 3:
                assert time.monotonic() < deadline, "the three scheduler passes never waited for the row lock"
                time.sleep(0.1)
        finally:
            holder.rollback()
        for tick in ticks:
            _, err = tick.communicate(timeout=60)
            assert tick.returncode == 0, err[-2000:]
    assert pg_rows(pg_migrated, "SELECT count(*) FROM django_tasks_database_dbtaskresult") == [(1,)]
    assert pg_rows(pg_migrated, "SELECT last_tick > now() - interval '1 hour' FROM jobs_schedule") == [(True,)]


def _waiting(url: str) -> int:
    rows = pg_rows(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND wait_event_type = 'Lock'")
    return int(rows[0][0])
