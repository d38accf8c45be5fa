"""One job table: the jobs of the first table (``jobs_job``, run on django-q2) move to the task
engine's (django-tasks' database backend); the workers' heartbeats and the schedules get tables
of their own; django-q2's tables go.

What moves: every job, with its request, progress and times. A queued job stays queued (the
new workers run it). A running one is handed to recovery as the job of a worker that died
(a heartbeat row seen long ago): run again if it had written nothing, else ended failed with its
audit row completed, as before. An ended one keeps the answer it stored (status and body).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import migrations, models

TASK_PATH = "secretsapi.operations.run_job"
WRITES = {"sync", "agent_sync", "execute_rotation"}
# django-tasks-db's "no run_after" (its models.get_date_max()).
NO_RUN_AFTER = datetime(9999, 1, 1, tzinfo=UTC)
LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)
STATUS = {"queued": "READY", "running": "RUNNING", "succeeded": "SUCCESSFUL", "failed": "FAILED",
          "cancelled": "FAILED"}


def _queue(operation: str) -> str:
    queues = getattr(settings, "JOB_QUEUES", {"writes": "secretsapi-writes", "reads": "secretsapi-reads"})
    return str(queues["writes" if operation in WRITES else "reads"])


def move_jobs(apps: Any, schema_editor: Any) -> None:
    Job = apps.get_model("jobs", "Job")
    Task = apps.get_model("django_tasks_database", "DBTaskResult")
    Beat = apps.get_model("jobs", "WorkerBeat")
    for job in Job.objects.all().iterator():
        status = STATUS.get(job.state, "FAILED")
        kwargs: dict[str, Any] = {"operation": job.operation, "actor": job.actor, "params": json.dumps(job.params or {})}
        if status in ("READY", "RUNNING"):
            kwargs["payload"] = json.dumps(job.payload or {})
        earlier = ["legacy"] * max(job.attempts - (1 if status == "RUNNING" else 0), 0)
        beat_id = f"legacy:{job.pk.hex}"
        outcome = None
        if status in ("SUCCESSFUL", "FAILED"):
            outcome = {"legacy": json.dumps({"status": job.status_code or 500, "body": job.result or {}}),
                       "done": job.done, "total": job.total}
        Task.objects.create(
            id=job.pk, status=status, args_kwargs={"args": [], "kwargs": kwargs}, priority=0, task_path=TASK_PATH,
            worker_ids=earlier + ([beat_id] if status == "RUNNING" else []), queue_name=_queue(job.operation),
            backend_name="default", run_after=NO_RUN_AFTER, return_value=outcome, exception_class_path="",
            traceback="", started_at=job.started_at, finished_at=job.finished_at,
        )
        Task.objects.filter(pk=job.pk).update(enqueued_at=job.created_at)  # auto_now_add set it to now
        if status == "RUNNING":
            Beat.objects.create(id=beat_id, host="", pid=0, queue=_queue(job.operation), started_at=LONG_AGO,
                                seen_at=LONG_AGO, job=job.pk, done=job.done, total=job.total,
                                audit_row=job.audit_row)


DROP_DJANGO_Q = [f"DROP TABLE IF EXISTS {table}" for table in ("django_q_ormq", "django_q_task", "django_q_schedule")]


class Migration(migrations.Migration):

    dependencies = [
        ("jobs", "0001_initial"),
        ("django_tasks_database", "0021_conditional_partial_index_ordering"),
    ]

    operations = [
        migrations.CreateModel(
            name="Schedule",
            fields=[
                ("name", models.CharField(max_length=32, primary_key=True, serialize=False)),
                ("cron", models.CharField(max_length=255)),
                ("setting", models.CharField(max_length=64)),
                ("last_tick", models.DateTimeField()),
                ("installed_at", models.DateTimeField()),
            ],
        ),
        migrations.CreateModel(
            name="WorkerBeat",
            fields=[
                ("id", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("host", models.CharField(max_length=255)),
                ("pid", models.PositiveIntegerField()),
                ("queue", models.CharField(max_length=32)),
                ("started_at", models.DateTimeField()),
                ("seen_at", models.DateTimeField(db_index=True)),
                ("job", models.UUIDField(blank=True, null=True)),
                ("done", models.PositiveIntegerField(default=0)),
                ("total", models.PositiveIntegerField(blank=True, null=True)),
                ("audit_row", models.BigIntegerField(blank=True, null=True)),
            ],
        ),
        migrations.RunPython(move_jobs, migrations.RunPython.noop),
        migrations.DeleteModel(name="Job"),
        *(migrations.RunSQL(statement, migrations.RunSQL.noop) for statement in DROP_DJANGO_Q),
        migrations.RunSQL("DELETE FROM django_migrations WHERE app = 'django_q'", migrations.RunSQL.noop),
    ]
