"""The commands that serve no page (the job worker, keys, projects, webhooks, schedules, health,
backups) run Django's system checks but the web interface's, as the engine commands do: the URL
check imported every view, DRF (psycopg, requests) and drf-spectacular (Django's test client),
most of their start. ``serve`` and ``manage.py check`` still run every check."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.failing_checks import failing_check
from tests.fresh_imports import loaded_by

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
NO_PAGE = ("accept_secret_key", "apikey", "backup", "generate_api_key", "health", "project", "restore", "schedule",
           "webhook", "worker")


@pytest.mark.slow
def test_commands_that_serve_no_page_do_not_import_the_web_interface_for_their_checks() -> None:
    # Each command's module, then its checks as Django runs them before handle(), in one fresh process.
    code = ("from django.core.management import load_command_class\n"
            "from django.core.management.base import ALL_CHECKS\n"
            f"for name in {NO_PAGE!r}:\n"
            "    command = load_command_class('secretsapi', name)\n"
            "    tags = command.requires_system_checks\n"
            "    command.check(tags=None if tags == ALL_CHECKS else tags)")
    assert loaded_by(code, ("rest_framework.serializers", "drf_spectacular.views", "psycopg", "prometheus_client",
                            "django.test", "project.urls")) == []


@pytest.mark.parametrize("tag", [checks.Tags.urls, checks.Tags.admin, checks.Tags.templates])
def test_a_failing_web_check_leaves_them_running(tag: str) -> None:
    with failing_check(tag, "tests.E003"):
        out = StringIO()
        call_command("apikey", "list", skip_checks=False, stdout=out, stderr=StringIO())
        call_command("generate_api_key", skip_checks=False, stdout=out)


def test_a_failing_check_of_another_kind_still_stops_them() -> None:
    with failing_check(checks.Tags.models, "tests.E004"), pytest.raises(CommandError, match=r"tests\.E004"):
        call_command("generate_api_key", skip_checks=False, stdout=StringIO(), stderr=StringIO())
