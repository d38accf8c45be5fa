"""Locks on targets and on the lockfile.

A write holds the locks of the target groups it touches (a file, a Vault path, an AWS
parameter) and the lockfile lock from before its first target write (it stages the new
lockfile first, so a full disk stops it with nothing changed) until its lockfile commit:
writes therefore take turns. Repairs put recorded values back and take the lockfile lock
only for their commit, so the stripes let them run beside writes to other targets. Groups
are hashed onto a fixed set of stripes, one lock file each, so a full sync holds a bounded
number of locks whatever the number of targets.

Stripes are taken in ascending order, the lockfile lock only after them, and the extra lock
(e.g. a database advisory lock for other hosts) right after each file lock: every holder
climbs the same ladder, so no two can deadlock.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import filelock

from secretsapi.service.errors import LockTimeout
from secretsapi.service.util.atomic_files import make_folders

STRIPES = 64
ALL_STRIPES = frozenset(range(STRIPES))


def acquire_file_lock(
    path: Path, timeout: float, waiting_for: str, *, budget: float | None = None
) -> filelock.BaseFileLock:
    """Take the lock file ``path`` (0600; held per process, so threads take turns too). Its
    folder, when the service creates it, is 0700 (``make_folders``).

    LockTimeout after ``timeout`` seconds (negative: wait forever), saying what it was
    ``waiting_for`` and the whole wait it had (``budget``, when ``timeout`` is what remained
    of it). The caller releases the returned lock.
    """
    lock = filelock.FileLock(str(path), timeout=timeout, mode=0o600, thread_local=False)
    try:
        lock.acquire()
    except filelock.Timeout:
        waited = timeout if budget is None else budget
        raise LockTimeout(f"timed out after {waited:g} s waiting for {waiting_for}") from None
    return lock


def stripe_of(key: Hashable) -> int:
    """The stripe of a target group, the same in every process: ``hash()`` is salted per process."""
    digest = hashlib.sha256(repr(key).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:4], "big") % STRIPES


def stripe_folder(lockfile: Path) -> Path:
    """``<lockfile>.targets/``, beside the lockfile's own ``.lck``."""
    path = Path(lockfile).absolute()
    return path.with_name(path.name + ".targets")


@contextlib.contextmanager
def stripe_locks(
    lockfile: Path,
    stripes: Iterable[int],
    *,
    timeout: float,
    extra: Callable[[Path, float], AbstractContextManager[Any]] | None = None,
) -> Iterator[None]:
    """Hold the given stripes' locks; LockTimeout when all of them take longer than ``timeout``.

    A negative timeout waits forever. ``extra`` is called with a per-stripe name derived from
    the lockfile's path and the time left.
    """
    folder = stripe_folder(lockfile)
    make_folders(folder)
    deadline = None if timeout < 0 else time.monotonic() + timeout
    with contextlib.ExitStack() as stack:
        for stripe in sorted(set(stripes)):
            left = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
            lock = acquire_file_lock(folder / f"{stripe:02d}.lck", left, f"the target locks in {folder}",
                                     budget=timeout)
            stack.callback(lock.release)
            if extra is not None:
                left = -1.0 if deadline is None else max(0.001, deadline - time.monotonic())
                stack.enter_context(extra(folder / f"{stripe:02d}", left))
        yield


_held = threading.local()


@contextlib.contextmanager
def lockfile_lock(path: Path, timeout: float = 60.0,
                  extra: contextlib.AbstractContextManager[Any] | None = None) -> Iterator[None]:
    """Serialize read-modify-write of ``path`` across threads and processes.

    Locks the sidecar ``<name>.lck`` (the lockfile itself is replaced by rename, so a lock on
    it would guard a vanished inode), then enters ``extra`` (e.g. a database advisory lock for
    several hosts); always in that order, so combined locks cannot deadlock. Re-entrant in
    one thread. A negative timeout waits forever.
    """
    sidecar = Path(path).absolute().with_name(Path(path).name + ".lck")
    held: set[Path] = _held.__dict__.setdefault("paths", set())
    if sidecar in held:
        yield
        return
    make_folders(sidecar.parent)
    lock = acquire_file_lock(sidecar, timeout, f"the lockfile lock {sidecar}")
    held.add(sidecar)
    try:
        with contextlib.ExitStack() as stack:
            if extra is not None:
                stack.enter_context(extra)
            yield
    finally:
        held.discard(sidecar)
        lock.release()
