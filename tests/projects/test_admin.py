"""The admin with projects: the secrets overview of a chosen project, the audit list's project filter."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from tests.factories import LOCAL_HOST, Project


@pytest.fixture
def admin_client(db: None) -> Client:
    client = Client(HTTP_HOST=LOCAL_HOST)
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-for-tests"))
    return client


def text(response: object) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))  # type: ignore[attr-defined]


def test_the_overview_shows_the_chosen_projects_secrets(admin_client: Client, billing: Project) -> None:
    page = text(admin_client.get("/admin/audit/auditentry/secrets/?project=billing"))
    assert "1 of 1 secrets shown" in page and "stripe_key" in page and "db_password" not in page


def test_the_overview_of_an_unknown_project_says_so(admin_client: Client, billing: Project) -> None:
    assert "project_not_found" in text(admin_client.get("/admin/audit/auditentry/secrets/?project=nope"))


def test_the_audit_list_filters_by_project(admin_client: Client, authed_api: APIClient, billing: Project) -> None:
    authed_api.get("/secrets")
    authed_api.get("/projects/billing/secrets")
    shown = admin_client.get("/admin/audit/auditentry/?project=billing&action=list_secrets").context["cl"].result_list
    assert [row.project for row in shown] == ["billing"]
