"""The admin shows jobs read-only, never their requests, and offers no page where a staff user
could queue or change one."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from secretsapi import operations
from tests import inline_jobs
from tests.factories import LOCAL_HOST

JOBS = "/admin/django_tasks_database/dbtaskresult/"


@pytest.fixture
def admin_client(db: None) -> Client:
    # force_login: the login throttle (django-axes) needs the request that Client.login does not pass.
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-for-tests"))
    return client


def test_jobs_are_listed_without_their_requests_and_cannot_be_changed(admin_client: Client) -> None:
    with inline_jobs.queued_only():
        job = operations.enqueue("validate_config", {"config": {"secret": "s3cr3t-in-the-request"}}, actor="ci")
    assert admin_client.get(JOBS).status_code == 200
    page = admin_client.get(f"{JOBS}{job.id}/change/")
    assert page.status_code == 200
    assert b"validate_config" in page.content
    assert b"s3cr3t-in-the-request" not in page.content
    assert b'name="status"' not in page.content
    assert admin_client.post(f"{JOBS}{job.id}/delete/", {"post": "yes"}).status_code == 403
    assert admin_client.get(f"{JOBS}add/").status_code == 403
