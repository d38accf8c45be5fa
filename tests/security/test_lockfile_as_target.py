"""A local target may not name the lockfile, the machine-local lockfile or the definition (issue 36, point 9).

As the attacker ran it: a definition whose ``local/file`` target (JSON, merged) is
``.gitsecrets.lock`` wrote the generated value into the lockfile, which must hold hashes only,
and a target naming ``Secretfile.yml`` replaced the definition. These are the service's own
files, refused like its data folder, with the other targets still written.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import Project, definition, file_secret

REFUSED = "is outside the allowed target roots (SERVICE_TARGET_ROOTS) or among the service's own files"


def _sync(client: APIClient) -> dict[str, Any]:
    body: dict[str, Any] = client.post("/sync", {}, format="json").json()
    return body


@pytest.mark.parametrize(("path", "fmt"), [
    (".gitsecrets.lock", "json"), (".gitsecrets.local.lock", "json"), ("Secretfile.yml", "yaml"),
    (".gitsecrets.lock.lck", "dotenv"), (".gitsecrets.lock.targets/x.env", "dotenv"),
    ("./sub/../.gitsecrets.lock", "json"),
])
def test_a_target_naming_the_services_own_file_is_refused_and_the_rest_is_written(
    authed_api: APIClient, project: Project, path: str, fmt: str
) -> None:
    project.write(definition(file_secret("stolen", path, fmt=fmt), file_secret("db", "out/app.env")))
    before = project.definition.read_text()
    body = _sync(authed_api)
    assert body["secrets_failed"] == ["stolen"]
    assert body["errors"][0]["message"] == f"path {path} {REFUSED}"
    assert (project.root / "out/app.env").exists()
    assert project.definition.read_text() == before
    lock = project.lock()
    assert set(lock["secrets"]) == {"db"}
    assert not (project.root / ".gitsecrets.local.lock").exists()


def test_a_lanes_lockfile_is_refused_as_a_target(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("stolen", "locks/dev.lock", fmt="json"), file_secret("db", "out/app.env"),
                             environments={"default": "dev", "profiles": {"dev": {"lockfile": "locks/dev.lock"}}}))
    body = _sync(authed_api)
    assert body["secrets_failed"] == ["stolen"]
    assert set(json.loads((project.root / "locks/dev.lock").read_text())["secrets"]) == {"db"}


def test_the_operators_lockfile_is_refused_as_a_target(
    authed_api: APIClient, project: Project, settings: Any
) -> None:
    settings.SERVICE_LOCKFILE = project.root / "state" / "service.lock"
    project.write(definition(file_secret("stolen", "state/service.lock", fmt="json"), file_secret("db", "out/app.env")))
    body = _sync(authed_api)
    assert body["secrets_failed"] == ["stolen"]
    assert set(json.loads((project.root / "state/service.lock").read_text())["secrets"]) == {"db"}


def test_a_source_may_not_read_the_lockfile_either(authed_api: APIClient, project: Project) -> None:
    project.write(definition(file_secret("db", "out/app.env")))
    _sync(authed_api)
    project.write(definition(file_secret("db", "out/app.env"), {
        "name": "copy", "kind": "random_password", "targets": [],
        "source": {"kind": "file", "config": {"path": ".gitsecrets.lock", "format": "json", "key": "version"}}}))
    body = _sync(authed_api)
    assert body["secrets_failed"] == ["copy"]
