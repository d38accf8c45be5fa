"""The admin shows jobs read-only and offers none of django-q2's pages, where a staff user could
schedule any importable function."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from jobs.models import Job
from tests.factories import LOCAL_HOST


@pytest.fixture
def admin_client(db: None) -> Client:
    # force_login: the login throttle (django-axes) needs the request that Client.login does not pass.
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-for-tests"))
    return client


@pytest.mark.parametrize("model", ["schedule", "success", "failure", "ormq"])
def test_the_task_engine_s_own_pages_are_not_in_the_admin(admin_client: Client, model: str) -> None:
    assert admin_client.get(f"/admin/django_q/{model}/").status_code == 404


def test_jobs_are_listed_and_cannot_be_changed(admin_client: Client) -> None:
    job = Job.objects.create(operation="sync", actor="ci", params={}, payload={"config": "x"})
    assert admin_client.get("/admin/jobs/job/").status_code == 200
    page = admin_client.get(f"/admin/jobs/job/{job.pk}/change/")
    assert page.status_code == 200
    assert b'name="operation"' not in page.content
    assert admin_client.post(f"/admin/jobs/job/{job.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Job.objects.filter(pk=job.pk).exists()
