"""GET /jobs and GET /jobs/{id}; and how a long operation's POST answers, in the request or as a job.

A long operation's POST asks ``secretsapi.operations``: a read of a small definition is answered
in the request; anything else is queued as a job, which a worker (``manage.py worker``) runs.
Without ``async`` the POST waits for the job, up to SERVICE_JOB_WAIT_SECONDS, and answers what
the job's result renders to: the same status and body as ever. Past that bound, or with
``async: true``, it answers 202 with the job and its address. With no worker alive it answers
503 (``no_worker``) at once; past the bounds on jobs waiting, 429 with ``Retry-After``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from apikeys.scopes import ADMIN_SCOPE, REQUIRED_SCOPE
from secretsapi import operations
from secretsapi.api.authentication import actor, request_principal
from secretsapi.api.docs import EXAMPLE_SECRET, EXAMPLE_TIME, HeaderedResponse, errors, header, response_example
from secretsapi.api.pagination import page_body
from secretsapi.api.projects import listing_project, path_prefix
from secretsapi.api.serializers.jobs import (
    RENDER,
    JobPageSerializer,
    JobQuerySerializer,
    JobSerializer,
    JobSummarySerializer,
    answer,
)
from secretsapi.api.views.base import StrictAPIView

JOB_LOCATION = {"Location": header("The job's address: poll it for its state and, once ended, its result.",
                                   "/jobs/3f2b8f8e-6a4c-4d3e-9a59-0b7d2a8c1e42")}
JOB_EXAMPLE: dict[str, Any] = {
    "id": "3f2b8f8e-6a4c-4d3e-9a59-0b7d2a8c1e42", "operation": "sync", "state": "running",
    "progress": {"done": 120, "total": 20000}, "actor": "ci", "project": "default", "params": {
        "dry_run": False, "force": False, "repair": False, "secret_name": None, "var_files": []},
    "created_at": EXAMPLE_TIME, "started_at": EXAMPLE_TIME, "finished_at": None, "status": None, "result": None,
}


def accepted_response() -> HeaderedResponse:
    """The 202 of every long operation, for its schema."""
    return HeaderedResponse(JobSerializer, headers=JOB_LOCATION, description=(
        "Queued or still running: with `async: true`, or when the job took longer than the server waits "
        "(SERVICE_JOB_WAIT_SECONDS). `GET` the `Location` for its state and, once ended, its result."))


def run_as_job(request: Request, operation: str, validated: dict[str, Any]) -> Response:
    """Answer ``operation`` in the request when cheap, else as its job did, or 202 with the job."""
    payload = dict(validated)
    run_async = payload.pop("async")
    who = actor(request)
    if not run_async and operations.cheap(operation, payload):
        return Response(RENDER[operation](operations.run_inline(operation, payload, actor=who)))
    job = operations.submit(operation, payload, actor=who)
    if not run_async:
        job = operations.wait(job, settings.SERVICE_JOB_WAIT_SECONDS)
        answered = answer(job)
        if answered is not None:
            return Response(answered[1], status=answered[0])
    return Response(JobSerializer(job).data, status=202, headers={"Location": f"{path_prefix()}/jobs/{job.id}"})


def _scopes(request: Request) -> frozenset[str]:
    principal = request_principal(request)
    return principal.scopes if principal is not None else frozenset()


def _allowed(request: Request) -> list[str]:
    scopes = _scopes(request)
    return [name for name, op in operations.OPERATIONS.items() if REQUIRED_SCOPE[op.scope_of] in scopes]


class JobListView(StrictAPIView):
    query_serializer = JobQuerySerializer

    @extend_schema(
        parameters=[JobQuerySerializer],
        responses={200: OpenApiResponse(JobPageSerializer, description="One page of jobs, newest first."),
                   **errors(401, 422, 500)},
        operation_id="list_jobs",
        summary="List jobs",
        description="The long operations' jobs (sync, agent sync, rotation, policy, drift, render, validate), "
        "newest first, `limit` per page from `offset`, filtered by `state`, `operation` and `since`. A key sees "
        "the jobs it asked for (a key with the `admin` scope sees every key's, and the scheduler's), of the "
        "operations its scopes allow it to ask for. A page shows each job's state and progress; its result "
        "is at `GET /jobs/{id}`. Scheduled runs are jobs of the user `scheduler`. Ended jobs are kept for "
        "SERVICE_JOB_RETENTION_DAYS.",
        examples=[response_example("One job", {"jobs": [{k: v for k, v in JOB_EXAMPLE.items() if k != "result"}],
                                               "count": 1, "page": 1, "per_page": 50,
                                               "total": 1, "next": None, "previous": None})],
        tags=["jobs"],
    )
    def get(self, request: Request) -> Response:
        query = JobQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        jobs = operations.read_jobs(actor=actor(request), everyone=ADMIN_SCOPE in _scopes(request),
                                    operations=_allowed(request), limit=q["limit"], offset=q["offset"],
                                    state=q.get("state"), operation=q.get("operation"), since=q.get("since"),
                                    project=listing_project(request, q.get("project")))
        return Response(page_body(request, "jobs", JobSummarySerializer(jobs, many=True).data, jobs,
                                  limit=q["limit"], offset=q["offset"]))


class JobDetailView(StrictAPIView):
    @extend_schema(
        responses={200: OpenApiResponse(JobSerializer, description="The job; once ended, with its result."),
                   **errors(401, 403, 404, 500)},
        operation_id="get_job",
        summary="Read a job",
        description="A job's state (`queued`, `running`, `succeeded`, `failed`, `cancelled`), its progress in "
        "secrets, its timestamps and who asked. Once it has ended, `status` and `result` are the status and body "
        "the synchronous call answers (the error body when it failed). A job whose worker stopped ends "
        "`failed` (`worker_died`), or is run again when it had written nothing. A key reads only the jobs it "
        "asked for (with the `admin` scope, every job): 404 for any other, as for a job that does not exist; "
        "reading it also needs the scope its operation needs (403 otherwise).",
        examples=[response_example("Running", JOB_EXAMPLE),
                  response_example("Succeeded", {**JOB_EXAMPLE, "state": "succeeded",
                                                 "progress": {"done": 1, "total": 1}, "finished_at": EXAMPLE_TIME,
                                                 "status": 200, "result": {
                                                     "secrets_generated": [EXAMPLE_SECRET], "secrets_skipped": [],
                                                     "secrets_failed": [], "secrets_repaired": [], "errors": [],
                                                     "message": "Sync complete: 1 secret(s) generated, 0 skipped."}})],
        tags=["jobs"],
    )
    def get(self, request: Request, job_id: str) -> Response:
        job = operations.read_job(job_id, actor=actor(request), everyone=ADMIN_SCOPE in _scopes(request),
                                  project=listing_project(request, None))
        if job is None:
            raise NotFound("There is no such job (or it is another key's).")
        if job.operation not in _allowed(request):
            scope = REQUIRED_SCOPE[operations.OPERATIONS[job.operation].scope_of]
            raise PermissionDenied(f"This API key does not have the {scope!r} scope this job's operation needs.")
        return Response(JobSerializer(job).data)

