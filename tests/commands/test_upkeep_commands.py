"""``manage.py clean`` and ``manage.py import``: output, exit codes and audit rows."""

from __future__ import annotations

import json

import pytest

from audit.models import AuditEntry
from tests.commands.test_engine_commands import run
from tests.factories import Project, definition, file_secret

pytestmark = pytest.mark.django_db


def test_clean_removes_an_orphaned_entry_and_audits_it(project: Project) -> None:
    project.write(definition(file_secret("db", "out/a.env"), file_secret("gone", "out/b.env")))
    run("sync")
    project.write(definition(file_secret("db", "out/a.env")))
    code, out = run("clean")
    assert code == 0 and "removed   gone" in out
    assert set(project.lock()["secrets"]) == {"db"}
    assert AuditEntry.objects.get(action="clean_lockfile").details["removed"] == ["gone"]


def test_clean_dry_run_json_names_the_orphans_and_keeps_them(project: Project) -> None:
    project.write(definition(file_secret("db", "out/a.env"), file_secret("gone", "out/b.env")))
    run("sync")
    project.write(definition(file_secret("db", "out/a.env")))
    code, out = run("clean", "--dry-run", "--json")
    assert code == 0 and json.loads(out)["removed"] == ["gone"]
    assert "gone" in project.lock()["secrets"]


def test_import_records_a_preseeded_value_and_exits_0(project: Project) -> None:
    project.write(definition(file_secret("db", "out/a.env")))
    (project.root / "out").mkdir()
    (project.root / "out/a.env").write_text("db=preseeded\n")
    code, out = run("import", "--secret", "db")
    assert code == 0 and "imported" in out and "preseeded" not in out
    assert "db" in project.lock()["secrets"]
    row = AuditEntry.objects.get(action="import_values")
    assert row.success is True and "preseeded" not in json.dumps(row.details)


def test_import_of_disagreeing_targets_exits_1(project: Project) -> None:
    secret = file_secret("db", "out/a.env")
    secret["targets"].append({"provider": "local", "kind": "file", "config": {"path": "out/b.json", "format": "json"}})
    project.write(definition(secret))
    (project.root / "out").mkdir()
    (project.root / "out/a.env").write_text("db=one\n")
    (project.root / "out/b.json").write_text('{"db": "two"}')
    code, _ = run("import")
    assert code == 1
    assert AuditEntry.objects.get(action="import_values").success is False


def test_sync_refresh_names_the_dropped_target_and_audits_it(project: Project) -> None:
    secret = file_secret("db", "out/a.env")
    secret["targets"].append({"provider": "local", "kind": "file", "config": {"path": "out/b.json", "format": "json"}})
    project.write(definition(secret))
    run("sync")
    project.write(definition(file_secret("db", "out/a.env")))
    code, out = run("sync", "--refresh")
    assert code == 0 and "refreshed  db: dropped local/file/out/b.json" in out
    assert list(project.lock()["secrets"]["db"]["targets"]) == ["local/file/out/a.env"]
    row = AuditEntry.objects.filter(action="sync").first()
    assert row is not None and row.details["refresh"] is True
    assert row.details["refreshed"] == {"db": ["local/file/out/b.json"]}


def test_clean_and_import_rows_are_found_by_the_secret_they_name(project: Project) -> None:
    project.write(definition(file_secret("db", "out/a.env"), file_secret("gone", "out/b.env")))
    run("sync")
    project.write(definition(file_secret("db", "out/a.env")))
    run("clean")
    run("import", "--secret", "db")
    assert "clean_lockfile" in set(AuditEntry.objects.filter(mentions__secret="gone").values_list("action", flat=True))
    assert "import_values" in set(AuditEntry.objects.filter(mentions__secret="db").values_list("action", flat=True))
