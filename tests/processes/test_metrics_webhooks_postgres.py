"""Tallies and deliveries on PostgreSQL with several processes at once, as several instances run them.

Tallies: processes counting the same new operation add up exactly (the row's creation races, the
increments are the database's). Deliveries: processes delivering the same outbox at once send
each event once (the lease is a conditional update).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers.webhook_receiver import webhook_receiver
from tests.processes.live import ROOT, pg_rows, run_in_django

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

PROCESSES = 4


def _together(database_url: str, data_dir: Path, code: str) -> list[subprocess.CompletedProcess[str]]:
    """``code`` in PROCESSES Django processes started at once against a migrated database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_")}
    env.update(DATABASE_URL=database_url, SERVICE_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="project.settings",
               SERVICE_WEBHOOK_ALLOW_PRIVATE="true")
    started = [subprocess.Popen([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(PROCESSES)]
    done = []
    for process in started:
        out, err = process.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return done


TALLY = """
from django.db import transaction
from metrics import tally
for _ in range(50):
    with transaction.atomic():
        tally.add("sync", True, 0.3)
print("tallied")
"""


def test_processes_tallying_the_same_operation_add_up_exactly(pg_migrated: str, tmp_path: Path) -> None:
    for result in _together(pg_migrated, tmp_path, TALLY):
        assert result.returncode == 0 and "tallied" in result.stdout, result.stderr[-2000:]
    assert pg_rows(pg_migrated, "SELECT count, seconds FROM metrics_operationtally") == [
        (PROCESSES * 50, pytest.approx(PROCESSES * 50 * 0.3))]


SCRAPES = """
from metrics import tally
for _ in range(50):
    tally.scraped("prometheus", tally.SCRAPE_SUCCEEDED)
print("scraped")
"""


def test_processes_counting_scrapes_of_the_same_key_add_up_exactly(pg_migrated: str, tmp_path: Path) -> None:
    for result in _together(pg_migrated, tmp_path, SCRAPES):
        assert result.returncode == 0 and "scraped" in result.stdout, result.stderr[-2000:]
    assert pg_rows(pg_migrated, "SELECT key, outcome, count FROM metrics_scrapetally") == [
        ("prometheus", "succeeded", PROCESSES * 50)]


def test_processes_delivering_the_same_outbox_send_each_event_once(pg_migrated: str, tmp_path: Path) -> None:
    with webhook_receiver() as receiver:
        setup = f"""
from webhooks import outbox
from webhooks.models import Endpoint
Endpoint.objects.create(url={receiver.url!r}, events=["sync.completed"], secret="s" * 32)
for i in range(40):
    outbox.enqueue([("sync.completed", {{"generated": [f"s{{i}}"]}})], actor="t", audit_row=i)
print("queued")
"""
        assert "queued" in run_in_django(pg_migrated, tmp_path, setup).stdout
        deliver = "from webhooks.delivery import deliver_due\nprint('delivered', deliver_due().delivered)\n"
        results = _together(pg_migrated, tmp_path, deliver)
    assert all(r.returncode == 0 for r in results), [r.stderr[-2000:] for r in results]
    assert sum(int(r.stdout.split()[-1]) for r in results) == 40
    bodies = [r.body for r in receiver.received]
    assert len(bodies) == len(set(bodies)) == 40
    assert pg_rows(pg_migrated, "SELECT state, count(*) FROM webhooks_delivery GROUP BY state") == [("delivered", 40)]
