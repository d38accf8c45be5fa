"""``secretsctl clean`` and ``secretsctl import``: SecretZero's upkeep commands over the same actions."""

from __future__ import annotations

import json

import pytest

from audit.models import AuditEntry
from tests.cli.test_secretsctl import run
from tests.factories import Project, definition, file_secret

pytestmark = pytest.mark.django_db


@pytest.fixture
def orphaned(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """``gone`` was synced, then taken out of the definition."""
    monkeypatch.chdir(project.root)
    project.write(definition(file_secret("db", "out/a.env"), file_secret("gone", "out/b.env")))
    assert run("sync").exit_code == 0
    project.write(definition(file_secret("db", "out/a.env")))
    return project


def test_clean_dry_run_lists_the_orphan_in_json_and_keeps_it(orphaned: Project) -> None:
    result = run("clean", "--dry-run", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["removed"] == ["gone"]
    assert "gone" in orphaned.lock()["secrets"]


def test_clean_removes_the_orphan_and_audits_it_as_the_cli(orphaned: Project) -> None:
    result = run("clean")
    assert result.exit_code == 0 and "removed   gone" in result.stdout
    assert set(orphaned.lock()["secrets"]) == {"db"}
    assert (AuditEntry.objects.get(action="clean_lockfile").user or "").startswith("cli:")


def test_import_records_a_preseeded_value_without_printing_it(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.root)
    project.write(definition(file_secret("db", "out/a.env")))
    (project.root / "out").mkdir()
    (project.root / "out/a.env").write_text("db=preseeded\n")
    result = run("import", "-s", "db")
    assert result.exit_code == 0 and "imported" in result.stdout and "preseeded" not in result.stdout
    assert "db" in project.lock()["secrets"]

