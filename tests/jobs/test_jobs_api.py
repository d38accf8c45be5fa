"""The long operations as jobs: the synchronous answer unchanged, `async`, the 202 past the wait
bound, GET /jobs/{id} and GET /jobs, one audit row, and the operation's scope to read a job.

Jobs run in the test's process as they are queued (conftest); the 202 past the bound is shown
with the engine's immediate mode off, where a queued job waits for a worker no test starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django_q.conf import Conf
from rest_framework.test import APIClient

from audit.models import AuditEntry
from jobs.models import Job
from secretsapi.service.state.locks import acquire_file_lock
from tests.factories import Project, definition, file_secret, named_key

ERROR_BODY = {"error", "detail", "timestamp"}


def three_secrets(project: Project) -> Project:
    return project.write(definition(*(file_secret(name, kind="random_hex") for name in ("a", "b", "c"))))


def client(key: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_X_API_KEY=key)
    return api


@pytest.fixture
def no_worker() -> Iterator[None]:
    """Jobs are only queued: no worker runs them."""
    Conf.SYNC = False
    yield
    Conf.SYNC = True


def test_a_sync_answers_its_result_and_leaves_a_succeeded_job_with_the_same_body(
    authed_api: APIClient, project: Project
) -> None:
    three_secrets(project)
    response = authed_api.post("/sync", {}, format="json")
    assert response.status_code == 200
    job = Job.objects.get()
    assert (job.operation, job.state, job.status_code) == ("sync", "succeeded", 200)
    assert job.result == response.json()
    assert sorted(response.json()["secrets_generated"]) == ["a", "b", "c"]


def test_a_sync_job_counts_its_secrets_as_progress(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    assert (Job.objects.get().done, Job.objects.get().total) == (3, 3)


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
    assert not Job.objects.exists()


def test_a_job_still_queued_past_the_wait_bound_is_answered_202(
    authed_api: APIClient, project: Project, settings: Any, no_worker: None
) -> None:
    settings.SERVICE_JOB_WAIT_SECONDS = 0
    three_secrets(project)
    response = authed_api.post("/drift/check", {}, format="json")
    assert response.status_code == 202
    assert response.json()["state"] == "queued"
    assert response.json()["result"] is None
    assert not project.lockfile.exists()


def test_get_job_gives_the_body_the_synchronous_call_answered(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    answered = authed_api.post("/rotation/check", {}, format="json").json()
    job = Job.objects.get(operation="check_rotation")
    body = authed_api.get(f"/jobs/{job.pk}").json()
    assert (body["state"], body["status"], body["result"]) == ("succeeded", 200, answered)
    assert body["started_at"] and body["finished_at"] and body["created_at"]


def test_a_failed_operation_s_job_holds_its_status_and_error_body(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    response = authed_api.post("/sync", {"secret_name": "nosuch"}, format="json")
    assert response.status_code == 404
    assert set(response.json()) == ERROR_BODY
    job = authed_api.get(f"/jobs/{Job.objects.get().pk}").json()
    assert (job["state"], job["status"], job["result"]) == ("failed", 404, response.json())


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
    job = Job.objects.get()
    assert (job.state, job.status_code, job.result) == ("failed", 503, response.json())
    assert AuditEntry.objects.get(action="sync").details["error"] == "lock_timeout"


def test_a_validation_job_keeps_no_definition_once_ended(authed_api: APIClient, project: Project) -> None:
    sent = {"version": "1.0", "secrets": [{"name": "k", "kind": "static", "config": {"default": "s3cr3t-v4lue"}}]}
    assert authed_api.post("/config/validate", {"config": sent}, format="json").status_code == 200
    job = Job.objects.get()
    assert (job.params, job.payload) == ({}, None)
    assert "s3cr3t-v4lue" not in str(authed_api.get(f"/jobs/{job.pk}").json())


def test_a_job_that_does_not_exist_is_404_with_the_error_body(authed_api: APIClient) -> None:
    for address in ("/jobs/3f2b8f8e-6a4c-4d3e-9a59-0b7d2a8c1e42", "/jobs/not-a-job"):
        response = authed_api.get(address)
        assert response.status_code == 404
        assert set(response.json()) == ERROR_BODY


def test_a_key_without_the_operation_s_scope_cannot_read_its_job(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    response = client(named_key("reader", "read")).get(f"/jobs/{Job.objects.get().pk}")
    assert response.status_code == 403
    assert "'write'" in response.json()["detail"]


def test_a_key_lists_only_the_jobs_of_operations_its_scopes_allow(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/drift/check", {}, format="json")
    listed = client(named_key("reader", "read")).get("/jobs").json()
    assert [job["operation"] for job in listed["jobs"]] == ["check_drift"]


def test_the_job_list_filters_by_state_operation_and_since(authed_api: APIClient, project: Project) -> None:
    three_secrets(project)
    authed_api.post("/sync", {}, format="json")
    authed_api.post("/sync", {"secret_name": "nosuch"}, format="json")
    authed_api.post("/drift/check", {}, format="json")
    first = Job.objects.order_by("created_at").first()
    assert first is not None

    def ops(query: str) -> list[str]:
        return [job["operation"] for job in authed_api.get(f"/jobs?{query}").json()["jobs"]]

    assert ops("state=failed") == ["sync"]
    assert ops("operation=check_drift") == ["check_drift"]
    assert ops("operation=sync&state=succeeded") == ["sync"]
    later = Job.objects.order_by("created_at")[1].created_at.isoformat().replace("+00:00", "Z")
    assert ops(f"since={later}") == ["check_drift", "sync"]
    page = authed_api.get("/jobs?limit=1&offset=1").json()
    assert (page["count"], page["page"], page["per_page"]) == (1, 2, 1)


@pytest.mark.parametrize("query", ["state=done", "operation=rm", "limit=0", "since=yesterday", "colour=red"])
def test_the_job_list_refuses_a_parameter_it_does_not_understand(authed_api: APIClient, query: str) -> None:
    response = authed_api.get(f"/jobs?{query}")
    assert response.status_code == 422
    assert set(response.json()) == ERROR_BODY
