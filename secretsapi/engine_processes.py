"""Long engine operations run in engine processes, so they never hold up a worker's short requests.

A sync of 20,000 secrets holds the interpreter lock of the process running it for seconds (the
definition's parse, the draws, the lockfile's JSON); a ``GET /health`` or a status served by
another thread of the same gunicorn worker waited for it (126-137 ms measured during a
5,000-secret sync). More threads cannot help: the interpreter lock is the bottleneck. So each
worker keeps a small pool of engine processes (``SERVICE_ENGINE_PROCESSES``, 0 runs everything
in the worker's thread as before) and ``actions`` sends the long operations there; the cheap
ones (health, status, the secret list, audit pages) stay in the worker's threads. Only a
process that called ``start()`` (a gunicorn worker, at boot) uses a pool: management commands
run one operation in their own process, where nothing waits for the interpreter lock, and
tests run in-process unless they start a pool.

The pool's processes are started with ``spawn`` (a fresh interpreter): never ``fork`` from a
threaded worker, whose other threads may hold locks the child would inherit taken. Each keeps
its own definition and lockfile caches. They ignore SIGTERM and SIGINT: a graceful stop of the
server lets a running write finish, then the worker's exit stops them (and a worker that dies
closes their queue, which ends them). An engine process that dies (killed, out of memory)
breaks its pool: the operation fails with ``EngineProcessDied`` and the next one starts a new
pool.

On PostgreSQL, a write's advisory locks must belong to the process doing the write, so that the
lock dies with it: the engine process opens its own database connection, configured with the
server's resolved ``DATABASES`` (tests rename the database at run time).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from django.conf import settings

from secretsapi.service.errors import EngineProcessDied

T = TypeVar("T")

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_pool_pid = 0
_started_pid = 0


def run(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` in an engine process; in this thread unless ``start()`` ran.

    Everything passed and returned crosses by pickle: module-level functions, the Workspace,
    results and errors (``ServiceError`` pickles with its attributes).
    """
    if _started_pid != os.getpid():
        return function(*args, **kwargs)
    pool = _current_pool()
    try:
        future = pool.submit(_call, function, args, kwargs)
    except BrokenProcessPool:
        # The pool broke before this operation was handed over (an idle process was killed):
        # nothing of it ran, so it runs in a new pool.
        _discard(pool)
        pool = _current_pool()
        future = pool.submit(_call, function, args, kwargs)
    try:
        return future.result()
    except BrokenProcessPool:
        _discard(pool)
        raise EngineProcessDied(
            "the engine process running this operation stopped before it finished (killed or out of "
            "memory); a new one serves the next request. A write may have updated some targets without "
            "its lockfile commit: run a drift check, then repeat the operation"
        ) from None


def start() -> None:
    """Start this process's pool and its engine processes now, not at the first long operation.

    Called once a gunicorn worker is ready (``post_worker_init``): the processes import the
    engine while the worker answers its first requests.
    """
    global _started_pid
    if settings.SERVICE_ENGINE_PROCESSES == 0:
        return
    _started_pid = os.getpid()
    pool = _current_pool()
    for _ in range(settings.SERVICE_ENGINE_PROCESSES):
        pool.submit(_warm)


def stop() -> None:
    """Stop this process's pool: running operations finish, queued ones are cancelled."""
    global _pool, _started_pid
    _started_pid = 0
    with _lock:
        pool, _pool = (_pool, None) if _pool_pid == os.getpid() else (None, None)
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def _current_pool() -> ProcessPoolExecutor:
    global _pool, _pool_pid
    with _lock:
        # A pool belongs to the process that made it: a forked copy must not use its queues.
        if _pool is None or _pool_pid != os.getpid():
            databases = settings.DATABASES if _needs_database() else None
            _pool = ProcessPoolExecutor(
                max_workers=settings.SERVICE_ENGINE_PROCESSES,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_initialize,
                initargs=(os.environ.get("DJANGO_SETTINGS_MODULE", "project.settings"), databases),
            )
            _pool_pid = os.getpid()
        return _pool


def _discard(pool: ProcessPoolExecutor) -> None:
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


def _needs_database() -> bool:
    # Only the advisory locks of PostgreSQL need a connection in the engine process.
    from secretsapi.database_locks import is_postgresql

    return is_postgresql()


# --- In the engine process -------------------------------------------------------------------

_uses_database = False


def _initialize(settings_module: str, databases: dict[str, Any] | None) -> None:
    global _uses_database
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if databases is not None:
        os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
        # The server's resolved databases, set before the first connection reads them; the
        # settings module itself reads the same environment as the server's.
        settings.DATABASES = databases
        _uses_database = True
    import secretsapi.service  # noqa: F401 - the engine loads once, before the first operation


def _warm() -> None:
    """Nothing: the initializer has loaded the engine."""


def _call(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    if _uses_database:
        from django.db import connections

        # As Django does at each request: a connection broken since the last operation (a
        # restarted database) is replaced rather than failing this one's advisory lock.
        for connection in connections.all(initialized_only=True):
            connection.close_if_unusable_or_obsolete()
    return function(*args, **kwargs)
