"""Writes take turns (each holds its target stripes and the lockfile lock from its staged
lockfile to its commit), and the one that waited plans again on what the first one committed."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.errors import LockLost, LockTimeout
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.state import value_store, write
from secretsapi.service.state.lockfile_io import read_lockfile
from secretsapi.service.state.locks import ALL_STRIPES, STRIPES, stripe_folder, stripe_of
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import definition, file_secret

WAIT = 30  # seconds; generous bounds for a loaded machine, never reached when things work


def _stripe(root: Path, path: str) -> int:
    """As value_store keys a file's group: (kind type, the kind's group)."""
    return stripe_of(("local/file", ("local/file", os.path.normpath(os.path.join(os.path.abspath(root), path)))))


def _paths_on_distinct_stripes(root: Path, count: int) -> list[str]:
    chosen: dict[int, str] = {}
    for i in range(1000):
        path = f"out/f{i}.env"
        chosen.setdefault(_stripe(root, path), path)
        if len(chosen) == count:
            return list(chosen.values())
    raise AssertionError("no distinct stripes found")


def _workspace(root: Path, *secrets: dict[str, Any], timeout: float = WAIT) -> Workspace:
    path = root / "Secretfile.yml"
    path.write_text(yaml.safe_dump(definition(*secrets), sort_keys=False))
    return Workspace(definition_path=path, lock_timeout=timeout)


class _Gate:
    """Holds a write of ``secret`` inside its target write until opened."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, secret: str) -> None:
        self.inside = threading.Event()
        self.open = threading.Event()
        original = value_store._write_targets

        def gated(jobs: Any, *rest: Any) -> Any:
            jobs = list(jobs)
            if any(job.secret.name == secret for job in jobs):
                self.inside.set()
                assert self.open.wait(WAIT)
            return original(jobs, *rest)

        monkeypatch.setattr(value_store, "_write_targets", gated)


@contextmanager
def _in_thread(target: Any, *args: Any, **kwargs: Any) -> Iterator[list[Any]]:
    """Runs ``target`` in a thread; its result, or the exception it raised, ends up in the list."""
    results: list[Any] = []

    def run() -> None:
        try:
            results.append(target(*args, **kwargs))
        except Exception as exc:  # handed to the test's assertions
            results.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield results
    finally:
        thread.join(WAIT)
        assert not thread.is_alive()


def test_a_write_to_another_file_waits_for_the_write_in_progress_and_both_are_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A write holds the lockfile lock from before its first target write (its lockfile is
    # staged first, so a full disk stops it with nothing changed): writes take turns.
    a_path, b_path = _paths_on_distinct_stripes(tmp_path, 2)
    ws = _workspace(tmp_path, file_secret("a", a_path), file_secret("b", b_path))
    gate = _Gate(monkeypatch, "a")
    with _in_thread(sync, ws, secret_name="a") as first:
        assert gate.inside.wait(WAIT)
        with _in_thread(sync, ws, secret_name="b") as second:
            assert not (tmp_path / b_path).exists()  # b has not started writing
            gate.open.set()
    assert first[0].secrets_generated == ["a"] and second[0].secrets_generated == ["b"]
    assert set(read_lockfile(ws.lockfile_path).keys()) == {"a", "b"}


def test_a_write_to_the_same_file_waits_and_then_plans_on_what_the_first_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path, file_secret("a", "out/app.json", fmt="json"))
    gate = _Gate(monkeypatch, "a")
    with _in_thread(sync, ws, secret_name="a") as first:
        assert gate.inside.wait(WAIT)
        with _in_thread(sync, ws, secret_name="a") as second:
            gate.open.set()
    results = first + second
    assert sorted(len(r.secrets_generated) for r in results) == [0, 1]  # generated once, then skipped
    entry = read_lockfile(ws.lockfile_path).entry("a")
    assert entry is not None
    assert entry.hash == sha256_text(json.loads((tmp_path / "out/app.json").read_text())["a"])


def test_two_rotations_of_one_due_secret_rotate_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path, file_secret("a", "out/app.env", rotation_period="30d"))
    sync(ws)
    data = read_lockfile(ws.lockfile_path).raw
    data["secrets"]["a"]["created_at"] = data["secrets"]["a"]["updated_at"] = "2020-01-01T00:00:00+00:00"
    ws.lockfile_path.write_text(json.dumps(data))
    gate = _Gate(monkeypatch, "a")
    with _in_thread(execute_rotation, ws) as first:
        assert gate.inside.wait(WAIT)
        with _in_thread(execute_rotation, ws) as second:
            gate.open.set()
    assert sorted(len(r.rotated) for r in first + second) == [0, 1]
    entry = read_lockfile(ws.lockfile_path).entry("a")
    assert entry is not None and entry.rotation_count == 1


def test_a_held_target_lock_times_out_with_lock_timeout(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, file_secret("a", "out/app.env"), timeout=0.2)
    with write.target_locks(ws.write_place, {_stripe(tmp_path, "out/app.env")}), _in_thread(sync, ws) as results:
        pass
    assert len(results) == 1 and isinstance(results[0], LockTimeout)
    with pytest.raises(LockTimeout), write.target_locks(ws.write_place, ALL_STRIPES):
        sync(ws)  # a second holder in this thread: the file lock is not re-entrant
    assert not ws.lockfile_path.exists()


def test_a_template_takes_every_stripe_and_a_target_less_unit_its_own(tmp_path: Path) -> None:
    template = {"name": "t", "kind": "random_password", "targets": [
        {"provider": "local", "kind": "template",
         "config": {"template_path": "t.j2", "output_path": "out/t.txt"}}]}
    ws = _workspace(tmp_path, template, {"name": "bare", "kind": "random_password"})
    found = ws.definition()
    assert value_store.stripes_for(found, [(found.secrets[0], found.secrets[0].units)]) == ALL_STRIPES
    bare = value_store.stripes_for(found, [(found.secrets[1], found.secrets[1].units)])
    assert len(bare) == 1 and 0 <= next(iter(bare)) < STRIPES


def test_the_extra_lock_is_taken_per_stripe_in_ascending_order_inside_its_file_lock(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []

    @contextmanager
    def extra(path: Path, timeout: float) -> Iterator[None]:
        assert (path.parent / (path.name + ".lck")).exists() and timeout > 0
        seen.append(("in", path.name))
        yield
        seen.append(("out", path.name))

    ws = Workspace(tmp_path / "Secretfile.yml", lock_timeout=5.0, extra_lock=extra)
    with write.target_locks(ws.write_place, {9, 2, 40}):
        pass
    assert [name for step, name in seen if step == "in"] == ["02", "09", "40"]
    assert sorted(seen) == sorted([("in", n) for n in ("02", "09", "40")] + [("out", n) for n in ("02", "09", "40")])
    assert stripe_folder(ws.lockfile_path) == tmp_path / ".gitsecrets.lock.targets"


def test_the_lock_files_and_the_folders_the_service_creates_for_them_are_private(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "Secretfile.yml").write_text(yaml.safe_dump(definition(file_secret("db"))))
    lockfile = tmp_path / "state" / "deep" / ".gitsecrets.lock"
    ws = Workspace(definition_path=tmp_path / "project" / "Secretfile.yml", lockfile_override=lockfile,
                   lock_timeout=WAIT, environ={})
    sync(ws)
    stripes = stripe_folder(lockfile)
    modes = {p.relative_to(tmp_path).as_posix(): p.stat().st_mode & 0o777
             for p in [tmp_path / "state", lockfile.parent, lockfile, lockfile.with_name(".gitsecrets.lock.lck"),
                       stripes, *stripes.iterdir()]}
    assert modes == {
        "state": 0o700, "state/deep": 0o700, "state/deep/.gitsecrets.lock": 0o600,
        "state/deep/.gitsecrets.lock.lck": 0o600, "state/deep/.gitsecrets.lock.targets": 0o700,
        **{f"state/deep/.gitsecrets.lock.targets/{p.name}": 0o600 for p in stripes.iterdir()},
    }


def _losing_extra_lock(checks_held: int) -> Any:
    """An extra lock (like a database advisory lock) whose probes say it is held for the first
    ``checks_held`` checks of the write, then that it was lost."""
    asked: list[int] = []

    def probe() -> bool:
        asked.append(1)
        return len(asked) <= checks_held

    @contextmanager
    def extra(path: Path, timeout: float) -> Iterator[Any]:
        yield probe

    return extra


def test_a_write_that_lost_its_extra_lock_before_the_lockfile_rename_stops_and_commits_nothing(
    tmp_path: Path,
) -> None:
    secret_path = "out/app.env"
    ws = _workspace(tmp_path, file_secret("db", secret_path))
    sync(ws)
    before = (tmp_path / ".gitsecrets.lock").read_bytes()
    # Held at the check before the one batch of target writes, lost at the one before the rename.
    lost = Workspace(ws.definition_path, lock_timeout=WAIT, extra_lock=_losing_extra_lock(1))
    with pytest.raises(LockLost) as raised:
        sync(lost, force=True)
    assert (tmp_path / ".gitsecrets.lock").read_bytes() == before
    assert raised.value.details["written_targets"] == {"db": ["local/file/out/app.env"]}
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_write_that_lost_its_extra_lock_before_a_batch_of_target_writes_writes_no_more(tmp_path: Path) -> None:
    paths = [f"out/f{i}.env" for i in range(value_store.BATCH + 1)]
    ws = _workspace(tmp_path, *(file_secret(f"s{i}", path) for i, path in enumerate(paths)))
    sync(ws)
    before = {path: (tmp_path / path).read_text() for path in paths}
    lost = Workspace(ws.definition_path, lock_timeout=WAIT, extra_lock=_losing_extra_lock(1))
    with pytest.raises(LockLost) as raised:
        sync(lost, force=True)
    changed = [path for path in paths if (tmp_path / path).read_text() != before[path]]
    assert changed == paths[:value_store.BATCH]  # the first batch; the second was never started
    assert raised.value.details == {"written_targets": {f"s{i}": [f"local/file/{paths[i]}"]
                                                        for i in range(value_store.BATCH)}}


def test_a_write_that_lost_its_extra_lock_before_its_first_target_write_changes_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, file_secret("db", "out/app.env"))
    sync(ws)
    before = {path: path.read_bytes() for path in (tmp_path / ".gitsecrets.lock", tmp_path / "out" / "app.env")}
    lost = Workspace(ws.definition_path, lock_timeout=WAIT, extra_lock=_losing_extra_lock(0))
    with pytest.raises(LockLost) as raised:
        sync(lost, force=True)
    assert {path: path.read_bytes() for path in before} == before
    assert raised.value.details == {}
