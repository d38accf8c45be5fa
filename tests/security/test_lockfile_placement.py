"""The lockfile where the definition says (issue 25, point 6): a profile's lockfile, and the
files beside it, stay inside SERVICE_TARGET_ROOTS or the definition's folder, never the
service's data folder. Elsewhere is refused before anything is read or created there, in the
same words whether the path exists, holds JSON or not. SERVICE_LOCKFILE stays the operator's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, file_secret, named_key

ROOTS = "SERVICE_TARGET_ROOTS"
A_LOCKFILE = {"version": "1.0", "metadata": {}, "secrets": {}}


def _with_lockfile(project: Project, lockfile: str) -> Project:
    lanes = {"default": "prod", "profiles": {"prod": {"lockfile": lockfile}}}
    return project.write(definition(file_secret("db"), environments=lanes))


@pytest.fixture
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("elsewhere")


def _reader() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=named_key("reader", "read"))
    return client


def test_a_sync_creates_nothing_outside_the_roots(authed_api: APIClient, project: Project, elsewhere: Path) -> None:
    _with_lockfile(project, str(elsewhere / "x.lock"))
    response = authed_api.post("/sync", {}, format="json")
    # An invalid definition: answered as every other one is (422 with the reason).
    assert response.json()["error"] and response.status_code == 422, response.content
    assert ROOTS in response.json()["detail"]
    assert "environments.profiles.prod.lockfile" in response.json()["detail"]
    assert list(elsewhere.iterdir()) == []
    assert not (project.root / "out").exists()


def test_a_valid_lockfile_outside_the_roots_is_never_rewritten(
    authed_api: APIClient, project: Project, elsewhere: Path
) -> None:
    (elsewhere / "x.lock").write_text(json.dumps(A_LOCKFILE))
    _with_lockfile(project, str(elsewhere / "x.lock"))
    authed_api.post("/sync", {"force": True}, format="json")
    assert json.loads((elsewhere / "x.lock").read_text()) == A_LOCKFILE
    assert sorted(p.name for p in elsewhere.iterdir()) == ["x.lock"]


def test_a_read_key_learns_nothing_of_what_is_there(
    db: None, api_key: str, project: Project, elsewhere: Path
) -> None:
    (elsewhere / "json.lock").write_text(json.dumps(A_LOCKFILE))
    (elsewhere / "text.lock").write_text("not json")
    reader = _reader()
    answers = []
    for name in ("json.lock", "text.lock", "missing.lock"):
        _with_lockfile(project, str(elsewhere / name))
        response = reader.get("/secrets/db/status")
        answers.append((response.status_code, response.json()["detail"].replace(name, "N")))
    assert answers[0] == answers[1] == answers[2]
    assert ROOTS in answers[0][1]


def test_the_data_folder_is_refused_though_it_lies_in_the_roots(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    settings.DATA_DIR = project.root / "data"
    settings.DATA_DIR.mkdir()
    _with_lockfile(project, "data/x.lock")
    response = authed_api.post("/sync", {}, format="json")
    assert ROOTS in response.json()["detail"]
    assert list(settings.DATA_DIR.iterdir()) == []


def test_a_linked_lock_folder_beside_the_lockfile_is_refused(
    authed_api: APIClient, project: Project, elsewhere: Path
) -> None:
    (project.root / "x.lock.targets").symlink_to(elsewhere, target_is_directory=True)
    _with_lockfile(project, "x.lock")
    response = authed_api.post("/sync", {}, format="json")
    assert ROOTS in response.json()["detail"]
    assert list(elsewhere.iterdir()) == []


def test_a_lockfile_in_the_definitions_folder_still_works(authed_api: APIClient, project: Project) -> None:
    _with_lockfile(project, "locks/prod.lock")
    response = authed_api.post("/sync", {}, format="json")
    assert response.json()["secrets_generated"] == ["db"]
    assert "db" in json.loads((project.root / "locks/prod.lock").read_text())["secrets"]


def test_the_operators_lockfile_setting_is_trusted(
    authed_api: APIClient, project: Project, elsewhere: Path, settings: Any
) -> None:
    settings.SERVICE_LOCKFILE = elsewhere / "operator.lock"
    project.write(definition(file_secret("db")))
    assert authed_api.post("/sync", {}, format="json").json()["secrets_generated"] == ["db"]
    assert (elsewhere / "operator.lock").exists()


def test_validation_reports_a_lockfile_outside_the_roots(
    db: None, api_key: str, settings: Any, tmp_path: Path, elsewhere: Path
) -> None:
    settings.SERVICE_TARGET_ROOTS = (tmp_path,)
    lanes = {"default": "prod", "profiles": {"prod": {"lockfile": str(elsewhere / "x.lock")},
                                             "dev": {"lockfile": str(tmp_path / "dev.lock")}}}
    doc = definition(file_secret("db", str(tmp_path / "app.env")), environments=lanes)
    report = _reader().post("/config/validate", {"config": doc}, format="json").json()
    assert report["valid"] is False
    assert [e for e in report["errors"] if "lockfile" in e] == [
        f"environments.profiles.prod.lockfile: path {elsewhere / 'x.lock'} is outside the allowed target roots "
        f"({ROOTS}) or among the service's own files"
    ]
