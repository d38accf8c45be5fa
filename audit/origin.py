"""Where the operation an audit row records came from: its ``origin`` column.

Set by the interface that took the call, for as long as it runs, never by an action:
``client:<address>`` for a request (the API and the admin; behind the proxy, the client address
the proxy forwards), ``worker:<worker id>`` for a job run by a worker (the scheduler's ticks;
a job a request asked for keeps that request's origin), and otherwise this process's own:
``cli:<os user>@<host>`` for a management command or ``secretsctl``, ``worker:<host>:<pid>`` for
what a job worker does beside its jobs (recovering a dead worker's).
"""

from __future__ import annotations

import getpass
import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

ORIGIN_MAX = 255
CLIENT_MAX = 64

_current: ContextVar[str | None] = ContextVar("audit_origin", default=None)
_process: str | None = None


def current() -> str:
    """The origin of the operation running in this context (the process's own when none is set)."""
    return _current.get() or process_origin()


@contextmanager
def using(origin: str | None) -> Iterator[None]:
    """Every row written inside names ``origin`` (None: the process's own)."""
    token = _current.set(origin[:ORIGIN_MAX] if origin else None)
    try:
        yield
    finally:
        _current.reset(token)


def client(address: str) -> str:
    """``client:<address>`` for the address a request came from: the last of a forwarded list
    (the one the proxy saw), an IPv4-mapped IPv6 address as IPv4; anything else clipped."""
    text = address.rsplit(",", 1)[-1].strip().removeprefix("[").split("]", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return f"client:{''.join(c for c in text if c.isprintable())[:CLIENT_MAX] or 'unknown'}"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return f"client:{ip}"


def worker(worker_id: str) -> str:
    """``worker:<id>`` for a job a worker runs on its own (the worker's id names its host and process)."""
    return f"worker:{worker_id}"[:ORIGIN_MAX]


def set_process_origin(text: str | None) -> None:
    """This process's own origin from now on, for every thread (a job worker: ``worker:<host>:<pid>``);
    None: ``cli:<os user>@<host>`` again."""
    global _process
    _process = text[:ORIGIN_MAX] if text else None


def process_origin() -> str:
    """This process's origin (``set_process_origin``), by default ``cli:<os user>@<host>``: the
    person or service account running this process on its host."""
    if _process is not None:
        return _process
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"cli:{user}@{socket.gethostname()}"[:ORIGIN_MAX]
