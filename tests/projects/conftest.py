"""Two projects: the default one (SERVICE_CONFIG) and ``billing``, each a definition of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from projects import registry
from tests.factories import Project, definition, file_secret


@pytest.fixture
def billing(db: None, tmp_path: Path, project: Project) -> Project:
    """The default project holds ``db_password``; ``billing`` (its own folder) ``stripe_key``."""
    project.write(definition(file_secret("db_password")))
    root = tmp_path / "billing"
    root.mkdir()
    other = Project(root).write(definition(file_secret("stripe_key")))
    registry.add("billing", str(other.definition), actor="test")
    return other


def names(answer: Any) -> list[str]:
    return [entry["name"] for entry in answer.json()["secrets"]]
