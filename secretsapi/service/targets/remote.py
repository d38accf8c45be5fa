"""Plumbing shared by the remote target kinds: lazy SDKs, clients, group checks, errors.

Remote kinds never put a value, a credential or an SDK's own error text in a TargetError:
SDK messages may echo request parameters (the value) or response bodies. Errors name the
target and a cause class only (``cannot reach the endpoint (timeout)``, ``permission denied``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import socket
import ssl
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetContext, TargetKind


def load_sdk(module: str, package: str, type_: str) -> Any:
    """Import an optional SDK at use, so the engine imports (and file targets work) without it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise TargetError(f"install the '{package}' package to use {type_} targets") from None


def digest(*parts: Any) -> str:
    """A stable cache key for settings that may hold credentials, without keeping them as keys."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ClientCache:
    """SDK clients by settings digest, least recently used first out.

    Creating clients is slow (boto3 loads service models), so one per distinct settings is
    kept for the process; different endpoints, credentials or timeouts get different clients.
    The cache digests the settings itself, so no caller can keep a credential as a key.
    ``per_thread``: each thread gets its own client, for SDKs whose clients are not documented
    as safe to share between threads (hvac's requests.Session, the kubernetes ApiClient).
    """

    def __init__(self, size: int = 32, *, per_thread: bool = False) -> None:
        self._size = size
        self._per_thread = per_thread
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, settings: Sequence[Any], factory: Callable[[], Any]) -> Any:
        """The client for ``settings`` (everything the client depends on), made once by ``factory``."""
        key = digest(*settings, threading.get_ident() if self._per_thread else None)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            client = factory()
            self._items[key] = client
            while len(self._items) > self._size:
                self._items.popitem(last=False)
            return client

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def network_cause(exc: BaseException) -> str | None:
    """``timeout``, ``connection refused``... when ``exc`` (or what it wraps) is a network error.

    Looks only at exception classes along the cause chain, never at messages.
    """
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    classes: list[type[BaseException]] = []
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        classes.extend(type(current).__mro__[:-1])
        reason = getattr(current, "reason", None)  # urllib3's MaxRetryError wraps its cause here
        pending.extend([current.__cause__, current.__context__,
                        reason if isinstance(reason, BaseException) else None])
    names = {cls.__name__ for cls in classes}
    # Root causes first: urllib3's NewConnectionError is a ConnectTimeoutError by inheritance.
    if ConnectionRefusedError in classes:
        return "connection refused"
    if socket.gaierror in classes or "NameResolutionError" in names:
        return "host not found"
    if any("Timeout" in name for name in names) or TimeoutError in classes:
        return "timeout"
    if ssl.SSLError in classes or any("SSL" in name for name in names):
        return "TLS error"
    if ConnectionError in classes or any("Connection" in name for name in names):
        return "connection failed"
    return None


def unreachable(where: str, exc: BaseException) -> TargetError | None:
    cause = network_cause(exc)
    return TargetError(f"{where}: cannot reach the endpoint ({cause})") if cause else None


def status_failure(status: int, where: str, operation: str, *, missing: str, unauthenticated: str = "") -> TargetError:
    """A store's HTTP status as a TargetError, by class (never the body, which can quote the
    request): ``missing`` says what a 404 means there, ``unauthenticated`` why a 401 may come."""
    if status == 401:
        return TargetError(f"{where}: not authenticated (401{unauthenticated})")
    if status == 403:
        return TargetError(f"{where}: permission denied (403)")
    if status == 404:
        return TargetError(f"{where}: {operation} failed (404: {missing})")
    if status == 409:
        return TargetError(f"{where}: changed by another writer during the {operation}; try again")
    return TargetError(f"{where}: {operation} failed (HTTP {status})")


def sdk_failure(exc: BaseException, where: str, operation: str) -> TargetError:
    """The last word on an SDK failure no kind recognised: a refused redirect (``rest.Redirected``,
    raised inside the SDK's call), its network cause, else its class."""
    redirect = _redirect_status(exc)
    if redirect is not None:
        return TargetError(f"{where}: {operation} failed ({redirect}: the store answered with a redirect, "
                           "which is never followed; check the address)")
    return unreachable(where, exc) or TargetError(f"{where}: {operation} failed ({type(exc).__name__})")


def _redirect_status(exc: BaseException | None) -> int | None:
    """The status of a ``rest.Redirected`` that is ``exc`` or what it wraps (azure-core wraps it)."""
    seen = 0
    while exc is not None and seen < 8:
        if type(exc).__name__ == "Redirected" and isinstance(getattr(exc, "status", None), int):
            return int(exc.status)  # type: ignore[attr-defined]
        inner = getattr(exc, "inner_exception", None)
        exc = inner if isinstance(inner, BaseException) else exc.__cause__ or exc.__context__
        seen += 1
    return None


@contextmanager
def sdk_errors(translate: Callable[[BaseException, str, str], TargetError], where: str,
               operation: str) -> Iterator[None]:
    """Raise ``translate(exc, where, operation)`` for an SDK failure in the block, a TargetError as is.

    ``from None``: the SDK's exception, whose text may quote the request, never rides along.
    """
    try:
        yield
    except TargetError:
        raise
    except Exception as exc:
        raise translate(exc, where, operation) from None


# -- groups ------------------------------------------------------------------------------------


def checked_group(kind: TargetKind, targets: Sequence[TargetSpec], location: str, ctx: TargetContext) -> str:
    """``<provider>/<kind>/<location>``, a group's name in errors, once each of ``targets`` is valid.

    A write or read checks its group's config with the kind's ``validate`` (its providers known)
    before any request, so an invalid config never reaches the store. ``location`` names the
    group's store entry (a parameter, a Vault path, a Secret), not one placement in it.
    """
    first = targets[0]
    where = f"{first.provider}/{first.kind}/{location}"
    for target in targets:
        require_valid(kind.validate(target, where, ctx.providers))
    return where


def placement_key(placement: Placement) -> str:
    """The key a placement is written under, as is: the store key of the file kinds."""
    return placement.key


def collect(items: Sequence[tuple[Placement, str]], store_key: Callable[[Placement], str],
            where: str) -> dict[str, str]:
    """``{key in the store: value}`` for one group; one key given two values is an error."""
    values: dict[str, str] = {}
    for placement, value in items:
        key = store_key(placement)
        if values.get(key, value) != value:
            raise TargetError(f"{where}: key '{key}' is given two values")
        values[key] = value
    return values


def same_config(placements: Iterable[Placement], keys: Sequence[str], where: str) -> Mapping[str, Any]:
    """The shared config of a group's placements; they must agree on ``keys``."""
    configs = [p.target.config for p in placements]
    first = configs[0]
    for key in keys:
        if any(c.get(key) != first.get(key) for c in configs[1:]):
            raise TargetError(f"{where}: placements disagree on config.{key}")
    return first


def require_valid(problems: list[str]) -> None:
    if problems:
        raise TargetError("; ".join(problems))
