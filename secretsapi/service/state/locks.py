"""Locks on targets and on the lockfile.

A write holds the locks of the target groups it touches (a file, a Vault path, an AWS
parameter) and the lockfile lock from before its first target write (it stages the new
lockfile first, so a full disk stops it with nothing changed) until its lockfile commit:
writes therefore take turns (a sync's repairs are part of its one write). Groups are hashed
onto a fixed set of stripes, one lock file each, so a full sync holds a bounded number of
locks whatever the number of targets; an import holds its targets' stripes while it reads them.

Stripes are taken in ascending order, the lockfile lock only after them, and the extra lock
(e.g. a database advisory lock for other hosts) right after each file lock: every holder
climbs the same ladder, so no two can deadlock.

An extra lock can be lost while held (its database session ends): each yields a probe, and
the write asks ``Held.check`` before each batch of target writes and before its lockfile
rename, so a write that lost a lock stops with ``LockLost`` instead of writing over another
instance's work.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import filelock

from secretsapi.service.errors import LockLost, LockTimeout
from secretsapi.service.util.atomic_files import make_folders

STRIPES = 64
ALL_STRIPES = frozenset(range(STRIPES))

# Whether an extra lock is still held. Equal probes are asked once per check (one database
# session answers for every lock it holds).
Probe = Callable[[], bool]
# Builds a lock that serializes writers beyond this machine (e.g. a database advisory lock):
# called with a name derived from the lockfile's absolute path and the timeout in seconds
# (negative: no limit); yields its probe, or None when it cannot be lost.
ExtraLock = Callable[[Path, float], AbstractContextManager[Probe | None]]


class Held:
    """The extra locks a write holds, for ``check``."""

    def __init__(self, *parts: Held) -> None:
        self._probes: dict[Probe, None] = {probe: None for part in parts for probe in part._probes}

    def add(self, probe: Probe | None) -> None:
        if probe is not None:
            self._probes[probe] = None

    def check(self) -> None:
        """LockLost when any extra lock was lost since it was taken."""
        for probe in self._probes:
            if not probe():
                raise LockLost("the write lost its lock across instances (its database session ended); "
                               "it stopped before changing anything more")


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
    extra: ExtraLock | None = None,
) -> Iterator[Held]:
    """Hold the given stripes' locks; LockTimeout when all of them take longer than ``timeout``.

    A negative timeout waits forever. ``extra`` is called with a per-stripe name derived from
    the lockfile's path and the time left.
    """
    folder = stripe_folder(lockfile)
    make_folders(folder)
    deadline = None if timeout < 0 else time.monotonic() + timeout
    held = Held()
    with contextlib.ExitStack() as stack:
        for stripe in sorted(set(stripes)):
            left = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
            lock = acquire_file_lock(folder / f"{stripe:02d}.lck", left, f"the target locks in {folder}",
                                     budget=timeout)
            stack.callback(lock.release)
            if extra is not None:
                left = -1.0 if deadline is None else max(0.001, deadline - time.monotonic())
                held.add(stack.enter_context(extra(folder / f"{stripe:02d}", left)))
        yield held


_held = threading.local()


@contextlib.contextmanager
def lockfile_lock(path: Path, timeout: float = 60.0,
                  extra: AbstractContextManager[Probe | None] | None = None) -> Iterator[Held]:
    """Serialize read-modify-write of ``path`` across threads and processes.

    Locks the sidecar ``<name>.lck`` (the lockfile itself is replaced by rename, so a lock on
    it would guard a vanished inode), then enters ``extra`` (e.g. a database advisory lock for
    several hosts); always in that order, so combined locks cannot deadlock. Re-entrant in
    one thread (the inner holder gets no probe: the outer one checks). A negative timeout
    waits forever.
    """
    sidecar = Path(path).absolute().with_name(Path(path).name + ".lck")
    held: set[Path] = _held.__dict__.setdefault("paths", set())
    if sidecar in held:
        yield Held()
        return
    make_folders(sidecar.parent)
    lock = acquire_file_lock(sidecar, timeout, f"the lockfile lock {sidecar}")
    held.add(sidecar)
    try:
        with contextlib.ExitStack() as stack:
            probes = Held()
            if extra is not None:
                probes.add(stack.enter_context(extra))
            yield probes
    finally:
        held.discard(sidecar)
        lock.release()
