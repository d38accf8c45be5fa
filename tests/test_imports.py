"""Every module of the project imports: the floor of the unit tier (``make check``), so a module no
fast test reaches still fails there on a syntax error, a bad import or an import-time error."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The project's packages, as the install finds them (pyproject.toml): a new one is imported too.
PACKAGES = tuple(pattern.rstrip("*") for pattern in tomllib.loads((ROOT / "pyproject.toml").read_text())
                 ["tool"]["setuptools"]["packages"]["find"]["include"])


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
    assert {"secretsapi", "project", "audit"} <= set(PACKAGES)
    assert {name.split(".")[0] for name in MODULES} == set(PACKAGES)
    assert len(MODULES) > 200


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name: str) -> None:
    assert importlib.import_module(name).__name__ == name
