"""Django app for jobs: the long operations' workers, heartbeats and schedules."""

from typing import Any

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django_tasks.signals import task_finished

        # The engine's own hook for a job's end: in whichever process ran it (a worker, a test).
        task_finished.connect(_job_finished, dispatch_uid="jobs.outcomes.finished")


def _job_finished(sender: Any, task_result: Any, **kwargs: Any) -> None:
    from jobs import outcomes

    workers = list(task_result.worker_ids or [])
    outcomes.finished(task_result.id, status=str(task_result.status), worker=workers[-1] if workers else None)
