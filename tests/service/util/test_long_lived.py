"""The caches report each newly kept parse (``long_lived.kept``), and only those: a worker freezes
what they keep (project/gc_policy.py), so a report per cache hit would freeze per request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from secretsapi.service.loading.loader import clear_definition_cache, load_definition
from secretsapi.service.state.lockfile_io import read_lockfile
from secretsapi.service.util import long_lived
from secretsapi.service.util.last_result import LastResult


@pytest.fixture
def reports() -> Iterator[list[None]]:
    seen: list[None] = []

    def listener() -> None:
        seen.append(None)

    long_lived.listen(listener)
    try:
        yield seen
    finally:
        long_lived.forget(listener)


def _lockfile(path: Path, secrets: dict[str, object]) -> Path:
    path.write_text(json.dumps({"version": "1.0", "secrets": secrets}))
    return path


def test_a_lockfile_parse_is_reported_once_and_its_cache_hits_never(tmp_path: Path, reports: list[None]) -> None:
    path = _lockfile(tmp_path / "secrets.lock", {"a": {"hash": "0" * 64}})
    for _ in range(3):
        read_lockfile(path, exact=True)
    assert len(reports) == 1


def test_a_changed_lockfile_is_reported_again(tmp_path: Path, reports: list[None]) -> None:
    path = _lockfile(tmp_path / "secrets.lock", {"a": {"hash": "0" * 64}})
    read_lockfile(path)
    _lockfile(path, {"b": {"hash": "1" * 64}})
    read_lockfile(path, exact=True)
    assert len(reports) == 2


def test_a_definition_parse_is_reported_once(tmp_path: Path, reports: list[None]) -> None:
    clear_definition_cache()
    path = tmp_path / "Secretfile.yml"
    path.write_text("version: '1.0'\nsecrets:\n  - name: a\n    kind: random_password\n    targets: []\n")
    for _ in range(3):
        load_definition(path)
    assert len(reports) == 1


def test_a_derived_value_is_reported_when_built_only(reports: list[None]) -> None:
    derived: LastResult[object, int] = LastResult()
    key = object()
    for _ in range(3):
        derived.get(key, lambda _: 1)
    assert len(reports) == 1
    derived.get(object(), lambda _: 2)
    assert len(reports) == 2


def test_a_listener_is_added_once() -> None:
    seen: list[None] = []

    def listener() -> None:
        seen.append(None)

    long_lived.listen(listener)
    long_lived.listen(listener)
    try:
        long_lived.kept()
    finally:
        long_lived.forget(listener)
    long_lived.kept()
    assert len(seen) == 1
