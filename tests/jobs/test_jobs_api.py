"""The long operations as jobs: the synchronous answer unchanged, `async`, the 202 past the wait
bound, GET /jobs/{id} and GET /jobs, one audit row, the operation's scope to read a job, and
reads of a small definition answered in the request.

Jobs run in the test's process as they are queued (tests/inline_jobs.py). Every read is a job
here (SERVICE_INLINE_MAX_BYTES=0) but in the tests of the inline answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from audit.models import AuditEntry
from jobs import queue
from jobs.queue import JobRecord
from secretsapi.service.state.locks import acquire_file_lock
from tests import inline_jobs
from tests.factories import Project, definition, file_secret, named_key

ERROR_BODY = {"error", "detail", "timestamp"}


@pytest.fixture(autouse=True)
def _reads_are_jobs(settings: Any) -> None:
    settings.SERVICE_INLINE_MAX_BYTES = 0


def three_secrets(project: Project) -> Project:
    return project.write(definition(*(file_secret(name, kind="random_hex") for name in ("a", "b", "c"))))


def client(key: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_X_API_KEY=key)
    return api


def only_job(**filters: Any) -> JobRecord:
    row = DBTaskResult.objects.filter(**filters).get()
    found = queue.find(str(row.id))
    assert found is not None
    return found


@pytest.fixture
def queued_only() -> Iterator[None]:
    with inline_jobs.queued_only():
        yield


def test_a_sync_answers_its_result_and_leaves_a_succeeded_job_with_the_same_body(
    authed_api: APIClient, project: Project
) -> None:
    three_secrets(project)
    response = authed_api.post("/sync", {}, format="json")
    assert response.status_code == 200
    job = only_job()
    assert (job.operation, job.state) == ("sync", "succeeded")
    read = authed_api.get(f"/jobs/{job.id}").json()
    assert (read["status"], read["result"]) == (200, response.json())
    assert sorted(response.json()["secrets_generated"]) == ["a", "b", "c"]


def test_a_job_keeps_the_operation_s_result_as_data_not_an_http_body(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    job = only_job()
    assert sorted(job.result["secrets_generated"]) == ["a", "b", "c"]
    assert "dry_run" in job.result and "written_targets" in job.result  # the engine's SyncResult, whole


def test_a_sync_job_counts_its_secrets_as_progress(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    assert (only_job().done, only_job().total) == (3, 3)
    assert authed_api.get(f"/jobs/{only_job().id}").json()["progress"] == {"done": 3, "total": 3}


def test_async_true_answers_202_with_the_job_and_its_location(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    response = authed_api.post("/sync", {"async": True}, format="json")
    assert response.status_code == 202
    body = response.json()
    assert response["Location"] == f"/jobs/{body['id']}"
    assert (body["operation"], body["actor"]) == ("sync", "service")
    assert body["params"] == {"dry_run": False, "force": False, "secret_name": None, "var_files": [], "repair": False,
                              "refresh": False, "environment": None}


def test_async_must_be_a_json_boolean(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    response = authed_api.post("/sync", {"async": "true"}, format="json")
    assert response.status_code == 422
    assert "async" in response.json()["detail"]
    assert not DBTaskResult.objects.exists()


def test_a_job_still_queued_past_the_wait_bound_is_answered_202(
    authed_api: APIClient, project: Project, settings: Any, queued_only: None
) -> None:
    settings.SERVICE_JOB_WAIT_SECONDS = 0
    three_secrets(project)
    response = authed_api.post("/drift/check", {}, format="json")
    assert response.status_code == 202
    assert (response.json()["state"], response.json()["status"], response.json()["result"]) == ("queued", None, None)
    assert not project.lockfile.exists()


def test_get_job_gives_the_body_the_synchronous_call_answered(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    answered = authed_api.post("/rotation/check", {}, format="json").json()
    job = only_job(queue_name__endswith="-reads")
    body = authed_api.get(f"/jobs/{job.id}").json()
    assert (body["state"], body["status"], body["result"]) == ("succeeded", 200, answered)
    assert body["started_at"] and body["finished_at"] and body["created_at"]


def test_a_failed_operation_s_job_holds_its_failure_and_answers_its_error_body(
    authed_api: APIClient, project: Project
) -> None:
    three_secrets(project)
    response = authed_api.post("/sync", {"secret_name": "nosuch"}, format="json")
    assert response.status_code == 404
    assert set(response.json()) == ERROR_BODY
    job = only_job()
    assert job.state == "failed"
    assert job.failure is not None and job.failure["code"] == "secret_not_defined"
    read = authed_api.get(f"/jobs/{job.id}").json()
    assert (read["state"], read["status"]) == ("failed", 404)
    assert {k: v for k, v in read["result"].items() if k != "timestamp"} == {
        k: v for k, v in response.json().items() if k != "timestamp"}


def test_a_job_s_operation_writes_one_audit_row_and_no_other(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {"async": True}, format="json")
    assert list(AuditEntry.objects.values_list("action", "user", "success")) == [("sync", "service", True)]


def test_a_write_waiting_for_the_locks_past_the_lock_timeout_fails_with_503(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    settings.SERVICE_LOCK_TIMEOUT = 1
    three_secrets(project)
    held = acquire_file_lock(project.root / ".gitsecrets.lock.lck", 5, "the test's lock")
    try:
        response = authed_api.post("/sync", {}, format="json")
    finally:
        held.release()
    assert response.status_code == 503
    assert "timed out" in response.json()["detail"]
    job = only_job()
    assert (job.state, job.failure and job.failure["code"]) == ("failed", "lock_timeout")
    assert AuditEntry.objects.get(action="sync").details["error"] == "lock_timeout"


def test_a_validation_job_keeps_no_definition_once_ended(authed_api: APIClient, project: Project) -> None:
    sent = {"version": "1.0", "secrets": [{"name": "k", "kind": "static", "config": {"default": "s3cr3t-v4lue"}}]}
    assert authed_api.post("/config/validate", {"config": sent}, format="json").status_code == 200
    row = DBTaskResult.objects.get()
    assert "s3cr3t-v4lue" not in str(row.args_kwargs)
    assert queue.find(str(row.id)).params == {}  # type: ignore[union-attr]
    assert "s3cr3t-v4lue" not in str(authed_api.get(f"/jobs/{row.id}").json())


def test_a_job_that_does_not_exist_is_404_with_the_error_body(authed_api: APIClient) -> None:
    for address in ("/jobs/3f2b8f8e-6a4c-4d3e-9a59-0b7d2a8c1e42", "/jobs/not-a-job"):
        response = authed_api.get(address)
        assert response.status_code == 404
        assert set(response.json()) == ERROR_BODY


def test_a_key_without_the_operation_s_scope_cannot_read_its_own_job(
    authed_api: APIClient, project: Project
) -> None:
    three_secrets(project)
    writer = client(named_key("writer", "write", "read"))
    writer.post("/sync", {}, format="json")
    from apikeys.models import ApiKey

    ApiKey.objects.filter(name="writer").update(scopes=["read"])
    response = writer.get(f"/jobs/{only_job().id}")
    assert response.status_code == 403
    assert "'write'" in response.json()["detail"]


def test_the_job_list_filters_by_state_operation_and_since(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/sync", {"secret_name": "nosuch"}, format="json")
    authed_api.post("/drift/check", {}, format="json")
    created = sorted(DBTaskResult.objects.values_list("enqueued_at", flat=True))

    def ops(query: str) -> list[str]:
        return [job["operation"] for job in authed_api.get(f"/jobs?{query}").json()["jobs"]]

    assert ops("state=failed") == ["sync"]
    assert ops("operation=check_drift") == ["check_drift"]
    assert ops("operation=sync&state=succeeded") == ["sync"]
    later = created[1].isoformat().replace("+00:00", "Z")
    assert ops(f"since={later}") == ["check_drift", "sync"]
    page = authed_api.get("/jobs?limit=1&offset=1").json()
    assert (page["count"], page["page"], page["per_page"]) == (1, 2, 1)


@pytest.mark.parametrize("query", ["state=done", "operation=rm", "limit=0", "since=yesterday", "colour=red"])
def test_the_job_list_refuses_a_parameter_it_does_not_understand(authed_api: APIClient, query: str) -> None:
    response = authed_api.get(f"/jobs?{query}")
    assert response.status_code == 422
    assert set(response.json()) == ERROR_BODY


def test_a_read_of_a_small_definition_is_answered_in_the_request_without_a_job(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    settings.SERVICE_INLINE_MAX_BYTES = 65536
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    for path, body in (("/rotation/check", {}), ("/drift/check", {"secret_name": "a"}), ("/policy/check", {}),
                       ("/config/render", {}), ("/config/validate", {"config": {"version": "1.0", "secrets": []}})):
        assert authed_api.post(path, body, format="json").status_code == 200, path
    assert list(DBTaskResult.objects.values_list("args_kwargs__kwargs__operation", flat=True)) == ["sync"]
    assert AuditEntry.objects.filter(action__in=["check_rotation", "check_drift", "check_policy", "render_config",
                                                 "validate_config"]).count() == 5


def test_a_read_of_a_definition_past_the_inline_bound_is_a_job(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    three_secrets(project)
    settings.SERVICE_INLINE_MAX_BYTES = project.root.joinpath("Secretfile.yml").stat().st_size - 1
    assert authed_api.post("/policy/check", {}, format="json").status_code == 200
    assert only_job().operation == "check_policy"


def test_async_true_makes_a_job_of_a_small_read_too(authed_api: APIClient, project: Project, settings: Any) -> None:
    settings.SERVICE_INLINE_MAX_BYTES = 65536
    three_secrets(project)
    response = authed_api.post("/policy/check", {"async": True}, format="json")
    assert response.status_code == 202
    assert only_job().operation == "check_policy"


def test_a_running_job_shows_the_progress_its_worker_reports(
    authed_api: APIClient, project: Project, queued_only: None
) -> None:
    from django.utils import timezone

    from jobs.models import WorkerBeat
    from jobs.workers import Reporter

    three_secrets(project)
    job = authed_api.post("/sync", {"async": True}, format="json").json()
    now = timezone.now()
    WorkerBeat.objects.create(id="w", host="h", pid=1, queue="q", started_at=now, seen_at=now)
    DBTaskResult.objects.filter(pk=job["id"]).update(status="RUNNING", started_at=now, worker_ids=["w"])
    report = Reporter("w", job["id"])
    report(2, 3)  # the last secret's report is written whatever the interval
    report(3, 3)
    read = authed_api.get(f"/jobs/{job['id']}").json()
    assert (read["state"], read["progress"], read["status"]) == ("running", {"done": 3, "total": 3}, None)
    assert authed_api.get("/jobs").json()["jobs"][0]["progress"] == {"done": 3, "total": 3}
