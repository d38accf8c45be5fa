"""``manage.py project add NAME PATH | list | remove NAME``."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from projects.models import Project as ProjectRow
from tests.factories import Project


def _run(*args: str) -> str:
    out = StringIO()
    call_command("project", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def shop(db: None, tmp_path: Path, project: Project) -> Path:
    project.write({"version": "1.0", "secrets": []})
    root = tmp_path / "shop"
    root.mkdir()
    return Project(root).write({"version": "1.0", "secrets": []}).definition


def test_add_then_list_shows_the_project(shop: Path) -> None:
    _run("add", "shop", str(shop))
    listed = json.loads(_run("list", "--json"))
    assert [(p["name"], p["definition"]) for p in listed["projects"]][1:] == [("shop", str(shop))]


def test_a_relative_path_is_taken_from_the_current_folder(shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(shop.parent)
    _run("add", "shop", "Secretfile.yml")
    assert ProjectRow.objects.get(name="shop").definition == str(shop)


def test_remove_leaves_the_definition_in_place(shop: Path) -> None:
    _run("add", "shop", str(shop))
    _run("remove", "shop")
    assert shop.exists() and not ProjectRow.objects.exists()


def test_a_refusal_is_one_line_and_a_failure(shop: Path) -> None:
    with pytest.raises(CommandError, match="reserved"):
        _run("add", "default", str(shop))


def test_removing_an_unknown_project_fails(shop: Path) -> None:
    with pytest.raises(CommandError, match="No project named 'nope'"):
        _run("remove", "nope")


def test_the_audit_export_filters_by_project(shop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from audit.recorder import record

    record(action="sync", resource="secrets", user="t", success=True, context={"project": "shop"})
    record(action="sync", resource="secrets", user="t", success=True, context={"project": "default"})
    call_command("audit", "--project", "shop", "--format", "jsonl")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert [(line["action"], line["project"]) for line in lines] == [("sync", "shop")]
