"""A local command line run (secretsctl ``-f``, manage.py ``--definition``) on an added project's
definition is that project's run: its audit rows name the project; any other file stays ``default``."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from django.core.management import call_command

from audit.models import AuditEntry
from secretsapi.cli.app import cli
from tests.factories import Project, definition, file_secret


def secretsctl(*args: str) -> int:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False).exit_code


def projects_of(action: str) -> list[str]:
    return list(AuditEntry.objects.filter(action=action).order_by("id").values_list("project", flat=True))


@pytest.fixture
def elsewhere(tmp_path: Path) -> Project:
    """A definition no project serves."""
    root = tmp_path / "elsewhere"
    root.mkdir()
    return Project(root).write(definition(file_secret("loose")))


def test_secretsctl_on_a_projects_definition_records_that_project(billing: Project) -> None:
    assert secretsctl("sync", "-f", str(billing.definition)) == 0
    assert secretsctl("status", "-f", str(billing.definition)) == 0
    assert projects_of("sync") == ["billing"]
    assert set(projects_of("list_secrets") + projects_of("get_secret_status")) <= {"billing"}
    assert AuditEntry.objects.exclude(action="project_add").exclude(project="billing").count() == 0


def test_secretsctl_finds_the_project_however_its_path_is_spelled(
    billing: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(billing.root)
    linked = billing.root.parent / "linked.yml"
    linked.symlink_to(billing.definition)
    assert secretsctl("sync", "-f", "Secretfile.yml") == 0
    assert secretsctl("sync", "-f", str(linked)) == 0
    assert projects_of("sync") == ["billing", "billing"]


def test_secretsctl_on_a_file_no_project_serves_records_default(billing: Project, elsewhere: Project) -> None:
    assert secretsctl("sync", "-f", str(elsewhere.definition)) == 0
    assert projects_of("sync") == ["default"]


def test_manage_py_on_a_projects_definition_records_that_project(billing: Project, elsewhere: Project) -> None:
    call_command("sync", definition=billing.definition, stdout=StringIO())
    call_command("sync", definition=elsewhere.definition, stdout=StringIO())
    call_command("sync", stdout=StringIO())  # SERVICE_CONFIG's
    assert projects_of("sync") == ["billing", "default", "default"]


def test_a_local_run_on_a_projects_definition_writes_its_lockfile_not_service_lockfile(
    billing: Project, tmp_path: Path, settings: Any
) -> None:
    """With SERVICE_LOCKFILE set (the default project's), a local sync of billing wrote there, and
    the service, which reads billing's own lockfile, then called billing's secrets missing."""
    settings.SERVICE_LOCKFILE = tmp_path / "default.lock"
    assert secretsctl("sync", "-f", str(billing.definition)) == 0
    assert "stripe_key" in billing.lock()["secrets"]
    assert not settings.SERVICE_LOCKFILE.exists()


def test_a_local_run_on_a_file_no_project_serves_still_writes_service_lockfile(
    billing: Project, elsewhere: Project, tmp_path: Path, settings: Any
) -> None:
    settings.SERVICE_LOCKFILE = tmp_path / "default.lock"
    call_command("sync", definition=elsewhere.definition, stdout=StringIO())
    assert "loose" in json.loads(settings.SERVICE_LOCKFILE.read_text())["secrets"]
    assert not elsewhere.lockfile.exists()
