"""The commands that serve no page (the job worker, keys, projects, webhooks, schedules, health,
backups) run Django's system checks but the web interface's, as the engine commands do: the URL
check imported every view, DRF (psycopg, requests) and drf-spectacular (Django's test client),
most of their start. ``serve`` and ``manage.py check`` still run every check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import CommandError

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
NO_PAGE = ("accept_secret_key", "apikey", "backup", "generate_api_key", "health", "project", "restore", "schedule",
           "webhook", "worker")


@pytest.mark.slow
def test_commands_that_serve_no_page_do_not_import_the_web_interface_for_their_checks() -> None:
    # Each command's module, then its checks as Django runs them before handle(), in one fresh process.
    code = (
        "import json, sys, django; django.setup()\n"
        "from django.core.management import load_command_class\n"
        "from django.core.management.base import ALL_CHECKS\n"
        f"for name in {NO_PAGE!r}:\n"
        "    command = load_command_class('secretsapi', name)\n"
        "    tags = command.requires_system_checks\n"
        "    command.check(tags=None if tags == ALL_CHECKS else tags)\n"
        "print(json.dumps(sorted(m for m in ('rest_framework.serializers', 'drf_spectacular.views', 'psycopg',"
        " 'prometheus_client', 'django.test', 'project.urls') if m in sys.modules)))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "project.settings", "DATABASE_URL": "sqlite:///:memory:"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert json.loads(out) == []


@pytest.mark.parametrize("tag", [checks.Tags.urls, checks.Tags.admin, checks.Tags.templates])
def test_a_failing_web_check_leaves_them_running(tag: str) -> None:
    def failing(**kwargs: Any) -> list[checks.CheckMessage]:
        return [checks.Error("broken", id="tests.E003")]

    checks.register(failing, tag)
    try:
        out = StringIO()
        call_command("apikey", "list", skip_checks=False, stdout=out, stderr=StringIO())
        call_command("generate_api_key", skip_checks=False, stdout=out)
    finally:
        checks.registry.registry.registered_checks.discard(failing)


def test_a_failing_check_of_another_kind_still_stops_them() -> None:
    def failing(**kwargs: Any) -> list[checks.CheckMessage]:
        return [checks.Error("broken", id="tests.E004")]

    checks.register(failing, checks.Tags.models)
    try:
        with pytest.raises(CommandError, match=r"tests\.E004"):
            call_command("generate_api_key", skip_checks=False, stdout=StringIO(), stderr=StringIO())
    finally:
        checks.registry.registry.registered_checks.discard(failing)
