"""GET/POST /projects, GET/DELETE /projects/{name}: the admin scope's, checked like the command's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from apikeys import keys
from audit.models import AuditEntry
from projects.models import Project as ProjectRow
from tests.factories import Project


@pytest.fixture
def admin_api(db: None, api_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=keys.create("ops", ["admin", "read", "write"]).key)
    return client


@pytest.fixture
def shop(tmp_path: Path, project: Project) -> Path:
    project.write({"version": "1.0", "secrets": []})
    root = tmp_path / "shop"
    root.mkdir()
    return Project(root).write({"version": "1.0", "secrets": []}).definition


def test_an_admin_key_adds_a_project(admin_api: APIClient, shop: Path) -> None:
    answer = admin_api.post("/projects", {"name": "shop", "definition": str(shop)}, format="json")
    assert answer.status_code == 201, answer.json()
    assert (answer.json()["name"], answer.json()["definition"]) == ("shop", str(shop))
    assert AuditEntry.objects.get(action="project_add").user == "ops"


def test_the_list_names_the_default_project_first(admin_api: APIClient, shop: Path, project: Project) -> None:
    admin_api.post("/projects", {"name": "shop", "definition": str(shop)}, format="json")
    found = admin_api.get("/projects").json()
    assert [(p["name"], p["default"]) for p in found["projects"]] == [("default", True), ("shop", False)]
    assert found["projects"][0]["definition"] == str(project.definition)


def test_a_key_without_the_admin_scope_cannot_add_a_project(db: None, api_key: str, shop: Path) -> None:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=keys.create("ci", ["read", "write"]).key)
    assert client.post("/projects", {"name": "shop", "definition": str(shop)}, format="json").status_code == 403
    assert not ProjectRow.objects.exists()


@pytest.mark.parametrize("name", ["default", "Shop", "-shop", "shop_1", "a" * 64, ""])
def test_a_refused_name_is_422(admin_api: APIClient, shop: Path, name: str) -> None:
    answer = admin_api.post("/projects", {"name": name, "definition": str(shop)}, format="json")
    assert answer.status_code == 422
    assert set(answer.json()) == {"error", "detail", "timestamp"}


def test_a_relative_definition_path_is_refused(admin_api: APIClient, shop: Path) -> None:
    answer = admin_api.post("/projects", {"name": "shop", "definition": "shop/Secretfile.yml"}, format="json")
    assert answer.status_code == 422 and "absolute" in answer.json()["detail"]


def test_a_missing_definition_file_is_refused(admin_api: APIClient, shop: Path) -> None:
    answer = admin_api.post("/projects", {"name": "shop", "definition": str(shop) + ".nope"}, format="json")
    assert answer.status_code == 422 and "No definition file" in answer.json()["detail"]


def test_a_definition_in_the_data_folder_is_refused(admin_api: APIClient, settings: Any, tmp_path: Path) -> None:
    settings.DATA_DIR = tmp_path / "data"
    settings.DATA_DIR.mkdir()
    planted = settings.DATA_DIR / "Secretfile.yml"
    planted.write_text("version: '1.0'\nsecrets: []\n")
    answer = admin_api.post("/projects", {"name": "shop", "definition": str(planted)}, format="json")
    assert answer.status_code == 422 and "SERVICE_DATA_DIR" in answer.json()["detail"]


def test_a_definition_served_already_is_refused(admin_api: APIClient, shop: Path, project: Project) -> None:
    answer = admin_api.post("/projects", {"name": "shop", "definition": str(project.definition)}, format="json")
    assert answer.status_code == 422 and "'default'" in answer.json()["detail"]


def test_a_name_in_use_is_409(admin_api: APIClient, shop: Path, tmp_path: Path) -> None:
    admin_api.post("/projects", {"name": "shop", "definition": str(shop)}, format="json")
    other = Project(tmp_path).definition
    answer = admin_api.post("/projects", {"name": "shop", "definition": str(other)}, format="json")
    assert answer.status_code == 409


def test_removing_a_project_keeps_its_files(admin_api: APIClient, shop: Path) -> None:
    admin_api.post("/projects", {"name": "shop", "definition": str(shop)}, format="json")
    assert admin_api.post("/projects/shop/sync", {}, format="json").status_code == 200
    lockfile = shop.parent / ".gitsecrets.lock"
    before = (shop.read_bytes(), lockfile.read_bytes())
    assert admin_api.delete("/projects/shop").status_code == 204
    assert (shop.read_bytes(), lockfile.read_bytes()) == before
    assert admin_api.get("/projects/shop").status_code == 404
    assert admin_api.get("/projects/shop/secrets").status_code == 404


def test_the_default_project_cannot_be_removed(admin_api: APIClient, shop: Path) -> None:
    answer = admin_api.delete("/projects/default")
    assert answer.status_code == 422 and "cannot be removed" in answer.json()["detail"]


def _limited_admin() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=keys.create("ops-shop", ["admin"], projects={"shop": ()}).key)
    return client


def test_a_limited_admin_key_lists_and_reads_its_projects_only(admin_api: APIClient, shop: Path) -> None:
    admin_api.post("/projects", {"name": "shop", "definition": str(shop)}, format="json")
    client = _limited_admin()
    assert [p["name"] for p in client.get("/projects").json()["projects"]] == ["shop"]
    assert client.get("/projects/default").status_code == 404
    assert client.delete("/projects/default").status_code == 404


def test_a_limited_admin_key_cannot_add_a_project(db: None, api_key: str, shop: Path) -> None:
    answer = _limited_admin().post("/projects", {"name": "shop", "definition": str(shop)}, format="json")
    assert answer.status_code == 403 and not ProjectRow.objects.exists()
