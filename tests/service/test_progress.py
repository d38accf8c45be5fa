"""``progress(done, total)``: the long operations count secrets, from 0 to every one, in order."""

from __future__ import annotations

from pathlib import Path

import yaml

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.util.progress import Progress
from secretsapi.service.workspace import Workspace
from tests.factories import definition, file_secret


def three(tmp_path: Path) -> Workspace:
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(*(file_secret(n, kind="random_hex") for n in ("a", "b", "c")))))
    return Workspace(definition_path=path, environ={})


def recorded(calls: list[tuple[int, int]]) -> Progress:
    def progress(done: int, total: int) -> None:
        calls.append((done, total))

    return progress


def test_a_sync_counts_every_secret_it_generates(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    sync(three(tmp_path), progress=recorded(calls))
    assert calls == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_a_sync_with_nothing_to_generate_reports_nothing(tmp_path: Path) -> None:
    ws = three(tmp_path)
    sync(ws)
    calls: list[tuple[int, int]] = []
    sync(ws, progress=recorded(calls))
    assert calls == []


def test_a_forced_rotation_counts_the_secrets_it_rotates(tmp_path: Path) -> None:
    ws = three(tmp_path)
    sync(ws)
    calls: list[tuple[int, int]] = []
    execute_rotation(ws, secret_name="b", force=True, progress=recorded(calls))
    assert calls == [(0, 1), (1, 1)]


def test_a_drift_check_counts_every_secret_it_compares(tmp_path: Path) -> None:
    ws = three(tmp_path)
    sync(ws)
    calls: list[tuple[int, int]] = []
    detect_drift(ws, progress=recorded(calls))
    assert calls == [(0, 3), (1, 3), (2, 3), (3, 3)]
