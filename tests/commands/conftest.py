"""Fixtures of the tests that run the documentation's commands on a fresh clone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docsession import make_clone, make_python_shim


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A copy of this checkout's files (tracked and untracked, not ignored), committed as a new repository."""
    return make_clone(tmp_path)


@pytest.fixture
def python_shim(tmp_path: Path) -> Path:
    return make_python_shim(tmp_path)
