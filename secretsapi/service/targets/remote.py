"""Plumbing shared by the remote target kinds: providers, lazy SDKs, clients, group checks, errors.

Remote kinds never put a value, a credential or an SDK's own error text in a TargetError:
SDK messages may echo request parameters (the value) or response bodies. Errors name the
target and a cause class only (``cannot reach the endpoint (timeout)``, ``permission denied``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import random
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.paths import Confined, named_file, read_bytes

DEFAULT_TIMEOUT = 5.0  # seconds, per remote call; providers override it with `timeout`
MAX_TIMEOUT = 300.0
# Calls in flight at once per provider within one operation (see ``fanout``): enough to hide
# tens of milliseconds of network latency, few enough not to trip a store's rate limits.
DEFAULT_MAX_CONCURRENCY = 8
MAX_CONCURRENCY = 64
# Answers to 429 (rate limited) and 503 (unavailable, sealed) are retried this many times, with
# exponential backoff and jitter; a Retry-After header is honoured up to RETRY_AFTER_MAX seconds.
THROTTLE_RETRIES = 3
RETRY_AFTER_MAX = 10


@dataclass(frozen=True)
class Provider:
    """A target's provider: the alias, its kind and its settings (auth config under config)."""

    alias: str
    kind: str
    auth_kind: str | None
    settings: Mapping[str, Any]

    @property
    def timeout(self) -> float:
        value = self.settings.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIMEOUT:
            raise TargetError(f"provider '{self.alias}': timeout must be a number of seconds "
                              f"between 0 and {MAX_TIMEOUT:g}")
        return float(value)

    @property
    def max_concurrency(self) -> int:
        value = self.settings.get("max_concurrency", DEFAULT_MAX_CONCURRENCY)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONCURRENCY:
            raise TargetError(f"provider '{self.alias}': max_concurrency must be a whole number "
                              f"between 1 and {MAX_CONCURRENCY}")
        return value

    def text(self, *keys: str) -> str | None:
        """The first of ``keys`` set to a non-empty string; TargetError for other types."""
        for key in keys:
            value = self.settings.get(key)
            if value is None or value == "":
                continue
            if not isinstance(value, str):
                raise TargetError(f"provider '{self.alias}': {key} must be a string")
            return value
        return None

    def token(self, ctx: TargetContext) -> str | None:
        """``token``, else the content of ``token_file``; None when neither is set."""
        token = self.text("token")
        token_file = self.text("token_file")
        if token is None and token_file is not None:
            token = read_secret_file(token_file, ctx, "token_file", self.alias)
        return token


def provider_of(target: TargetSpec, ctx: TargetContext) -> Provider:
    """The provider a target names; an undeclared alias is a provider kind with no settings.

    Settings are the auth block's ``config`` (and any other keys beside its ``kind``),
    overlaid by the provider's ``config``: SecretZero keeps a region or a kubeconfig under
    ``auth.config``, other tools under ``config``; both work.
    """
    spec = ctx.providers.get(target.provider)
    if spec is None:
        return Provider(target.provider, target.provider_kind or target.provider, None, {})
    auth = spec.auth if isinstance(spec.auth, Mapping) else {}
    auth_config = auth.get("config") if isinstance(auth.get("config"), Mapping) else {}
    settings = {k: v for k, v in auth.items() if k not in ("kind", "config")}
    settings.update(auth_config or {})
    settings.update(spec.config or {})
    auth_kind = auth.get("kind")
    return Provider(spec.alias, spec.kind, auth_kind if isinstance(auth_kind, str) else None, settings)


def checked_provider(target: TargetSpec, ctx: TargetContext, auth_kinds: Sequence[str], family: str) -> Provider:
    """The target's provider, if its auth kind (when it names one) is one of ``auth_kinds``.

    ``family`` names the store in the error: ``AWS``, ``Vault``, ``Kubernetes``.
    """
    provider = provider_of(target, ctx)
    if provider.auth_kind is not None and provider.auth_kind not in auth_kinds:
        raise TargetError(f"provider '{provider.alias}': auth kind '{provider.auth_kind}' is not "
                          f"supported for {family} (supported: {', '.join(auth_kinds)})")
    return provider


def load_sdk(module: str, package: str, type_: str) -> Any:
    """Import an optional SDK at use, so the engine imports (and file targets work) without it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise TargetError(f"install the '{package}' package to use {type_} targets") from None


def read_secret_file(path_text: str, ctx: TargetContext, what: str, alias: str) -> str:
    """A token file's stripped content; relative paths are relative to the definition folder.
    The file is confined like a local target (``named_path``) and read without following a link."""
    where = f"provider '{alias}': {what} '{path_text}'"
    data = read_bytes(confined_file(path_text, ctx, what, alias), where)
    if data is None:
        raise TargetError(f"{where} not found")
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise TargetError(f"{where} cannot be read (not UTF-8 text)") from None


def named_path(path_text: str, ctx: TargetContext, what: str, alias: str) -> str:
    """The real path of a file a provider setting names, for an SDK to read: inside the target
    roots, never the service's own files (``paths.named_file``); refused naming the setting."""
    return str(confined_file(path_text, ctx, what, alias).path)


def tls_setting(value: Any, ctx: TargetContext, alias: str, setting: str = "verify", *,
                never_off: str | None = None) -> bool | str:
    """A provider's TLS verification: true, false, or the path of a CA bundle (a private CA),
    confined like ``named_path``. ``never_off`` refuses false, giving the store's reason."""
    if value is True or (value is False and never_off is None):
        return bool(value)
    if isinstance(value, str) and value:
        return named_path(value, ctx, setting, alias)
    if never_off is not None:
        raise TargetError(f"provider '{alias}': {setting} must be true or the path of a CA bundle ({never_off})")
    raise TargetError(f"provider '{alias}': {setting} must be true, false or a CA bundle path")


def confined_file(path_text: str, ctx: TargetContext, what: str, alias: str) -> Confined:
    """``named_path``'s check, giving the confined file (to read without following a link)."""
    try:
        return named_file(ctx.base_dir, path_text, ctx.target_roots, ctx.service_paths)
    except TargetError as exc:
        raise TargetError(f"provider '{alias}': {what}: {exc}") from None


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


def throttle_retry() -> Any:
    """urllib3 retries for HTTP stores (Vault, Kubernetes, Vercel): a refused connection once; 429
    and 503 answers a few times, backed off with jitter, after the Retry-After they name (or the
    X-RateLimit-Reset, capped);
    never a timed-out read, which the store may have applied. Once retries run out the last
    answer goes back to the SDK, which reports its status as usual."""
    return _throttle_retry_class()(total=THROTTLE_RETRIES + 1, connect=1, read=0, status=THROTTLE_RETRIES, redirect=0,
                 other=0, status_forcelist=(429, 503), allowed_methods=None, backoff_factor=0.25,
                 backoff_jitter=0.25, backoff_max=5, respect_retry_after_header=True,
                 retry_after_max=RETRY_AFTER_MAX, raise_on_status=False)


@functools.cache
def _throttle_retry_class() -> Any:
    from urllib3.util.retry import Retry

    class ThrottleRetry(Retry):
        def get_retry_after(self, response: Any) -> float | None:
            # Stores that name the end of the rate-limit window instead (Vercel, GitHub):
            # X-RateLimit-Reset, in epoch seconds; capped like Retry-After.
            after = super().get_retry_after(response)
            reset = response.headers.get("X-RateLimit-Reset")
            if after is not None or reset is None or not reset.isdigit():
                return after
            return min(max(0.0, int(reset) - time.time()), float(self.retry_after_max))

        def get_backoff_time(self) -> float:
            # urllib3 retries the first time at once; a throttled store needs a pause every time.
            pause = float(super().get_backoff_time())
            if pause == 0 and self.history:
                pause = self.backoff_factor + random.random() * self.backoff_jitter  # noqa: S311 - jitter
            return pause

    return ThrottleRetry


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
    """The last word on an SDK failure no kind recognised: its network cause, else its class."""
    return unreachable(where, exc) or TargetError(f"{where}: {operation} failed ({type(exc).__name__})")


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


def checked_group(validate: Callable[[TargetSpec, str], list[str]], targets: Sequence[TargetSpec],
                  location: str) -> str:
    """``<provider>/<kind>/<location>``, a group's name in errors, once each of ``targets`` is valid.

    A write or read checks its group's config with the kind's ``validate`` before any request,
    so an invalid config never reaches the store. ``location`` names the group's store entry
    (a parameter, a Vault path, a Secret), not one placement in it.
    """
    first = targets[0]
    where = f"{first.provider}/{first.kind}/{location}"
    for target in targets:
        require_valid(validate(target, where))
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


# -- config validation -------------------------------------------------------------------------


def check_text(config: Mapping[str, Any], key: str, where: str, *, required: bool = False,
               choices: Sequence[str] = ()) -> list[str]:
    value = config.get(key)
    if value is None:
        return [f"{where}: config.{key} is required"] if required else []
    if not isinstance(value, str) or (required and not value.strip()):
        return [f"{where}: config.{key} must be a non-empty string" if required
                else f"{where}: config.{key} must be a string"]
    if choices and value not in choices:
        return [f"{where}: config.{key} '{value}' is not one of {', '.join(choices)}"]
    return []


def check_labels(config: Mapping[str, Any], key: str, where: str) -> list[str]:
    value = config.get(key)
    if value is None:
        return []
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        return [f"{where}: config.{key} must be a mapping of strings to strings"]
    return []


def require_valid(problems: list[str]) -> None:
    if problems:
        raise TargetError("; ".join(problems))
