"""Every module of the project imports: the floor of the unit tier (``make check``), so a module no
fast test reaches still fails there on a syntax error, a bad import or an import-time error."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("secretsapi", "project", "audit", "apikeys", "adminusers", "jobs", "metrics", "webhooks")


def modules() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "." in path.stem or parts[-1] == "__main__":  # gunicorn.conf.py; python -m entry points run
                continue
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


MODULES = modules()


def test_every_package_of_the_project_has_modules() -> None:
    assert {name.split(".")[0] for name in MODULES} == set(PACKAGES)
    assert len(MODULES) > 200


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name: str) -> None:
    assert importlib.import_module(name).__name__ == name
