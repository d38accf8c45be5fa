"""An install with jobs in the first table (django-q2's time) upgrades: `migrate` moves every job to
the task engine's table, a running one is handed to recovery, and django-q2's tables go."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from audit.models import AuditEntry
from audit.recorder import begin
from jobs import queue, recovery

BEFORE = [("jobs", "0001_initial")]

pytestmark = pytest.mark.migrations


@pytest.fixture
def old_schema(transactional_db: None) -> Iterator[MigrationExecutor]:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE django_q_ormq (id integer PRIMARY KEY, payload text)")
    executor.loader.build_graph()
    yield executor
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_migrate_moves_every_job_of_the_first_table_and_drops_django_q2_s(old_schema: MigrationExecutor) -> None:
    Job = old_schema.loader.project_state(BEFORE).apps.get_model("jobs", "Job")
    now = timezone.now()
    done = Job.objects.create(operation="sync", actor="ci", params={"dry_run": False}, state="succeeded",
                              status_code=200, result={"secrets_generated": ["a"]}, created_at=now - timedelta(hours=2),
                              started_at=now - timedelta(hours=2), finished_at=now - timedelta(hours=2), attempts=1)
    waiting = Job.objects.create(operation="check_drift", actor="ci", params={}, payload={"secret_name": None,
                                 "var_files": []}, state="queued", created_at=now)
    row = begin(action="sync", resource="secrets", user="ci", details={})
    cut = Job.objects.create(id=uuid.uuid4(), operation="sync", actor="ci", params={}, payload={"secret_name": None},
                             state="running", started_at=now, worker="oldhost:4242", attempts=1, audit_row=row)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    ended = queue.find(str(done.pk))
    assert ended is not None and (ended.state, ended.actor, ended.legacy) == (
        "succeeded", "ci", {"status": 200, "body": {"secrets_generated": ["a"]}})
    assert abs((ended.created_at - (now - timedelta(hours=2))).total_seconds()) < 1
    queued = queue.find(str(waiting.pk))
    assert queued is not None and queued.state == "queued" and queued.operation == "check_drift"
    assert queue.find(str(cut.pk)).state == "running"  # type: ignore[union-attr]
    # The worker that ran it is gone: recovery ends it, completing its audit row.
    assert [r.job for r in recovery.recover()] == [str(cut.pk)]
    died = queue.find(str(cut.pk))
    assert died is not None and died.failure is not None and died.failure["code"] == "worker_died"
    assert AuditEntry.objects.get(pk=row).details["error"] == "worker_died"
    assert "django_q_ormq" not in connection.introspection.table_names()
    assert "jobs_job" not in connection.introspection.table_names()
