"""A two-environment project as SecretZero lays one out: ``dev`` (the default) and ``prod``,
each with its var file, its lockfile and its target profile."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.factories import Project, definition

LANES = {
    "default": "dev",
    "profiles": {
        "dev": {"var_files": ["dev.szvar"], "lockfile": ".gitsecrets.dev.lock", "target_profile": "files_dev"},
        "prod": {"var_files": ["prod.szvar"], "lockfile": ".gitsecrets.prod.lock", "target_profile": "files_prod"},
    },
}
# prod moves every local target into one JSON file (provider override), then sets the file
# kind's format (target-kind override, merged after it).
TARGET_PROFILES = {
    "files_dev": {"target_overrides": {"file": {"format": "dotenv"}}},
    "files_prod": {"provider_overrides": {"local": {"path": "out/prod-app.json", "format": "dotenv"}},
                   "target_overrides": {"file": {"format": "json"}}},
}


def lane_definition(**top: Any) -> dict[str, Any]:
    secrets = [
        {"name": "db_password", "kind": "random_password", "config": {"length": 24}, "rotation_period": "30d",
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/{{ var.env }}.env"}}]},
        {"name": "api_key", "kind": "random_string", "config": {"length": 32},
         "targets": [{"provider": "local", "kind": "file",
                      "config": {"path": "out/{{ var.env }}-api.env", "format": "dotenv"}}]},
    ]
    return definition(*secrets, variables={"env": "dev"}, environments=copy.deepcopy(LANES),
                      target_profiles=copy.deepcopy(TARGET_PROFILES), **top)


@pytest.fixture
def lanes(project: Project) -> Project:
    (project.root / "dev.szvar").write_text("env: dev\n")
    (project.root / "prod.szvar").write_text("env: prod\n")
    return project.write(lane_definition())
