"""Names, variable files and target paths that try to leave the definition folder are refused,
and nothing is written anywhere the definition does not say."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.asserts import assert_error_body
from tests.factories import Project, definition, file_secret


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def fenced(tmp_path: Path, settings: Any) -> Project:
    """The project lives two folders down, so ``../..`` lands in a folder the test watches."""
    root = tmp_path / "outer" / "inner" / "project"
    root.mkdir(parents=True)
    settings.SERVICE_CONFIG = root / "Secretfile.yml"
    settings.SERVICE_LOCKFILE = None
    settings.SERVICE_ALLOW_SCRIPTS = False
    return Project(root)


@pytest.mark.parametrize("name", ["../x", "../../etc/passwd", "/etc/passwd", "..", "a/../../b", "x\x00y"])
def test_sync_of_a_secret_name_that_is_a_path_is_an_unknown_secret(
    authed_api: APIClient, project: Project, name: str
) -> None:
    project.write(definition(file_secret("db_password", "out/app.env")))
    response = authed_api.post("/sync", {"secret_name": name}, format="json")
    assert_error_body(response, 422 if "\x00" in name else 404)  # NUL: refused by the request's validation
    assert files_under(project.root) == {project.definition}


@pytest.mark.parametrize("path", ["../../escape.env", "out/../../escape.env", "ABSOLUTE", "..", "out/.."])
def test_a_target_path_outside_the_definition_folder_is_refused_and_nothing_is_written_outside(
    authed_api: APIClient, tmp_path: Path, fenced: Project, path: str
) -> None:
    if path == "ABSOLUTE":
        path = str(tmp_path / "outer" / "absolute.env")
    fenced.write(definition(file_secret("inside", "out/app.env"), file_secret("escaper", path)))
    before = files_under(tmp_path)
    response = authed_api.post("/sync", {}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["secrets_generated"] == ["inside"] and body["secrets_failed"] == ["escaper"]
    assert "outside the allowed target roots (SERVICE_TARGET_ROOTS)" in body["errors"][0]["message"]
    # relative_to raises for a file written outside the definition folder
    written = {p.relative_to(fenced.root).as_posix() for p in files_under(tmp_path) - before}
    target_locks = {p for p in written if p.startswith(".gitsecrets.lock.targets/")}
    assert written - target_locks == {"out/app.env", ".gitsecrets.lock", ".gitsecrets.lock.lck"}


def test_a_symlinked_folder_that_points_outside_is_refused(
    authed_api: APIClient, tmp_path: Path, fenced: Project
) -> None:
    outside = tmp_path / "outer" / "elsewhere"
    outside.mkdir()
    os.symlink(outside, fenced.root / "out")
    fenced.write(definition(file_secret("escaper", "out/app.env")))
    body = authed_api.post("/sync", {}, format="json").json()
    assert body["secrets_failed"] == ["escaper"] and "SERVICE_TARGET_ROOTS" in body["errors"][0]["message"]
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("var_file", ["../vars.yml", "../../vars.yml", "/etc/hostname", "sub/../../vars.yml"])
def test_a_var_file_outside_the_definition_folder_is_400_and_not_read(
    authed_api: APIClient, fenced: Project, var_file: str
) -> None:
    (fenced.root.parent / "vars.yml").write_text("env: outside\n")
    (fenced.root.parent.parent / "vars.yml").write_text("env: outside\n")
    fenced.write(definition(file_secret("db", "out/app.env"))).declare(var_file)  # its author tries it
    for path in ("/sync", "/agent/sync"):
        response = authed_api.post(path, {"var_files": [var_file]}, format="json")
        assert_error_body(response, 400)
        assert "outside the definition folder" in response.json()["detail"]
    assert not (fenced.root / "out").exists()


@pytest.mark.parametrize("path", ["/secrets/..%2F..%2Fetc%2Fpasswd/status", "/secrets/%2E%2E/status",
                                  "/secrets/..%2Fx"])
def test_encoded_traversal_in_url_paths_is_never_a_500(authed_api: APIClient, project: Project, path: str) -> None:
    project.write(definition(file_secret("db_password", "out/app.env")))
    response = authed_api.get(path)
    assert response.status_code < 500
    assert set(response.json()) >= {"name"} or set(response.json()) == {"error", "detail", "timestamp"}
