"""``vault/vault_kv``: secrets as keys of a HashiCorp Vault KV secret (engine version 1 or 2).

Every placement at one (provider, mount, path) is written by one read-modify-write that keeps
the path's other keys; on KV v2 it is one new version, guarded by check-and-set so a
concurrent writer makes the write fail instead of being lost.

Target id: ``<provider>/vault_kv/<mount>/<path>``, with ``#<key>`` appended when ``key`` is
set to something other than the default ``value``, so secrets sharing a path under different
keys have distinct ids.

Provider settings: ``address`` (``url``; else VAULT_ADDR), ``token`` or ``token_file`` (else
VAULT_TOKEN, then ~/.vault-token) or, with auth kind ``approle``, ``role_id`` and ``secret_id``
(a login at ``auth/approle/login``, or ``auth/<approle_mount>/login``), ``namespace`` (else
VAULT_NAMESPACE), ``verify`` (true, false or a CA bundle path; else VAULT_CACERT /
VAULT_SKIP_VERIFY), ``timeout`` (default 5 s),
``max_concurrency`` (default 8). Requests go through the one transport (``rest``): 429 and 503
retried with backoff, no redirect followed (a write that got one failed), no proxy or netrc.

VAULT_TOKEN, ~/.vault-token and VAULT_CLIENT_CERT are the server's: with them, an ``address`` the
definition names must be one the operator lists (``egress``); VAULT_ADDR is the operator's own. An
AppRole login, or a token the definition gives, never carries the server's token or certificate.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.providers import (
    CONCURRENCY,
    TIMEOUT,
    Provider,
    checked_provider,
    provider_of,
    tls_setting,
)
from secretsapi.service.targets.remote import (
    ClientCache,
    checked_group,
    collect,
    digest,
    load_sdk,
    same_config,
    sdk_errors,
    sdk_failure,
)
from secretsapi.service.targets.rest import new_session
from secretsapi.service.targets.schema import AuthKind, KindSchema, ProviderSchema, Setting
from secretsapi.service.util.hashing import sha256_text, sha256_value

DEFAULT_MOUNT = "secret"
DEFAULT_KEY = "value"
VAULT = ProviderSchema(
    "vault", "Vault",
    "HashiCorp Vault through hvac; VAULT_ADDR, VAULT_TOKEN (then ~/.vault-token), VAULT_NAMESPACE, "
    "VAULT_CACERT and VAULT_SKIP_VERIFY by default.",
    config={
        "address": Setting("string", "Vault URL (alias: url)"),
        "namespace": Setting("string", "Vault Enterprise namespace"),
        "verify": Setting("boolean", "verify TLS; or the path of a CA bundle", True, strict=False),
        "timeout": TIMEOUT,
        "max_concurrency": CONCURRENCY,
    },
    auth_kinds=(AuthKind("token"), AuthKind("token_file"), AuthKind("env"), AuthKind("ambient"),
                AuthKind("approle", requires=("role_id", "secret_id"))),
    auth_config={
        "token": Setting("string", "Vault token"),
        "token_file": Setting("string", "file holding the token (relative to the definition folder)"),
        "role_id": Setting("string", "auth kind approle: the AppRole's role id"),
        "secret_id": Setting("string", "approle: the secret id"),
        "approle_mount": Setting("string", "approle: the auth method's mount", "approle"),
    },
    addressed=True,
)
PROVIDERS = (VAULT,)

# hvac clients hold a requests.Session, which requests does not document as thread-safe.
_clients = ClientCache(64, per_thread=True)


def _mount(target: TargetSpec) -> str:
    return str(target.config.get("mount_point") or DEFAULT_MOUNT).strip("/")


def _path(target: TargetSpec) -> str:
    return str(target.config.get("path", "")).strip("/")


def _key(target: TargetSpec) -> str:
    return str(target.config.get("key") or DEFAULT_KEY)


class VaultKvKind(Kind):
    schema = KindSchema(
        "vault/vault_kv",
        "A key of a HashiCorp Vault KV secret; the path's other keys are kept. KV v2 writes one new version "
        "per sync, with check-and-set.",
        {
            "path": Setting("string", "secret path inside the mount, e.g. app/prod/db", required=True),
            "mount_point": Setting("string", "KV secrets engine mount", DEFAULT_MOUNT),
            "version": Setting("integer", "KV engine version: 1 or 2", 2, choices=(1, 2)),
            "key": Setting("string", "key inside the secret's data", DEFAULT_KEY),
        },
        target_id="`<alias>/vault_kv/<mount>/<path>`, plus `#<key>` when the key is not `value`",
        example={'path': 'app/db'}
    )

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        provider = provider_of(target, ctx)
        return provider.auth_kind != "approle" and provider.token(ctx) is None

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        return f"{target.provider}/{target.kind}/{self.location(target, ctx)}"

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        key = _key(target)
        return f"{_mount(target)}/{_path(target)}" + ("" if key == DEFAULT_KEY else f"#{key}")

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, _mount(target), _path(target))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        mount, path = _mount(target), _path(target)
        where = checked_group(self, [p.target for p, _ in items], f"{mount}/{path}", ctx)
        version = same_config([p for p, _ in items], ("version",), where).get("version", 2)
        values = collect(items, lambda p: _key(p.target), where)
        kv = self._client(target, ctx).secrets.kv
        with sdk_errors(_error, where, "write"):
            if version == 1:
                current, exists = self._read_v1(kv, mount, path)
                if not exists or {**current, **values} != current:
                    kv.v1.create_or_update_secret(path=path, secret={**current, **values},
                                                  method="PUT" if exists else "POST", mount_point=mount)
            else:
                current, cas = self._read_v2(kv, mount, path)
                if cas == 0 or {**current, **values} != current:
                    kv.v2.create_or_update_secret(path=path, secret={**current, **values}, cas=cas,
                                                  mount_point=mount)
        return {p.key: sha256_text(values[_key(p.target)]) for p, _ in items}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        target = items[0].target
        mount, path = _mount(target), _path(target)
        where = checked_group(self, [p.target for p in items], f"{mount}/{path}", ctx)
        kv = self._client(target, ctx).secrets.kv
        with sdk_errors(_error, where, "read"):
            if target.config.get("version", 2) == 1:
                data, _ = self._read_v1(kv, mount, path)
            else:
                data, _ = self._read_v2(kv, mount, path)
        backs = {}
        for placement in items:
            location = self.location(placement.target, ctx)
            key = _key(placement.target)
            if key not in data:
                backs[placement.key] = ReadBack(False, None, location)
                continue
            stored = data[key]
            text = stored if isinstance(stored, str) else None
            backs[placement.key] = ReadBack(True, sha256_value(stored), location, text)
        return backs

    # -- Vault ---------------------------------------------------------------------------

    def _client(self, target: TargetSpec, ctx: TargetContext) -> Any:
        hvac = load_sdk("hvac", "hvac", self.type)
        provider = checked_provider(target, ctx, VAULT)
        approle = provider.auth_kind == "approle"
        own = None if approle else provider.token(ctx)
        # VAULT_TOKEN, then ~/.vault-token: the server's, only where the operator said.
        server_token = None if approle or own is not None else hvac.utils.get_token_from_env()
        operator = os.environ.get("VAULT_ADDR")
        given = provider.text("address", "url")
        address = provider.address(ctx, VAULT, given, operator, None,
                                   server_credential="the server's Vault token" if server_token else None)
        if not address:
            raise TargetError(f"provider '{provider.alias}': no Vault address (set address in the "
                              "provider, or VAULT_ADDR)")
        # The server's client certificate (VAULT_CLIENT_CERT) goes only where its token may.
        trusted = not given or ctx.egress.allows(given, kind=VAULT.kind, operator=operator)
        namespace = provider.text("namespace") or os.environ.get("VAULT_NAMESPACE") or None
        verify = _verify(provider.settings.get("verify"), ctx, provider.alias)
        timeout = provider.timeout
        token: str | None
        if approle:
            token = _approle_token(hvac, provider, address, namespace, verify, timeout, trusted)
        else:
            token = own if own is not None else server_token
        if not token:
            raise TargetError(f"provider '{provider.alias}': no Vault token (set token or "
                              "token_file in the provider's auth, or VAULT_TOKEN)")
        return _clients.get((address, token, namespace, verify, timeout, trusted),
                            lambda: _hvac_client(hvac, address, token, namespace, verify, timeout, trusted))

    @staticmethod
    def _read_v2(kv: Any, mount: str, path: str) -> tuple[dict[str, Any], int]:
        """The latest version's data ({} when absent or deleted) and its version (0: none)."""
        invalid_path = load_sdk("hvac.exceptions", "hvac", "vault/vault_kv").InvalidPath
        try:
            response = kv.v2.read_secret_version(path=path, mount_point=mount,
                                                 raise_on_deleted_version=False)
        except invalid_path as exc:
            # Never written, or the latest version destroyed: the metadata may still count versions.
            body = exc.json if isinstance(exc.json, Mapping) else {}
            return {}, _version(body)
        data = (response.get("data") or {}).get("data") if isinstance(response, Mapping) else None
        return (dict(data) if isinstance(data, Mapping) else {}), _version(response)

    @staticmethod
    def _read_v1(kv: Any, mount: str, path: str) -> tuple[dict[str, Any], bool]:
        invalid_path = load_sdk("hvac.exceptions", "hvac", "vault/vault_kv").InvalidPath
        try:
            response = kv.v1.read_secret(path=path, mount_point=mount)
        except invalid_path:
            return {}, False
        data = response.get("data") if isinstance(response, Mapping) else None
        return (dict(data) if isinstance(data, Mapping) else {}), True


# AppRole logins by settings digest: (token, monotonic time it stops being used). A token is used
# until APPROLE_MARGIN of its lease is left, then a new login gets another.
_approle_tokens: dict[str, tuple[str, float]] = {}
_approle_lock = threading.Lock()
APPROLE_MARGIN = 0.2


def _hvac_client(hvac: Any, address: str, token: str, namespace: str | None, verify: bool | str,
                 timeout: float, trusted: bool) -> Any:
    """An hvac client on this transport's session, following no redirect; the server's client
    certificate (VAULT_CLIENT_CERT) only for an address trusted with the server's credentials
    (``()``: none, where hvac would otherwise take it from the environment)."""
    return hvac.Client(url=address, token=token, namespace=namespace, verify=verify, timeout=timeout,
                       allow_redirects=False, cert=None if trusted else (), session=new_session(VaultKvKind.type))


def _approle_token(hvac: Any, provider: Provider, address: str, namespace: str | None,
                   verify: bool | str, timeout: float, trusted: bool) -> str:
    """A token from ``auth/<approle_mount>/login`` with the provider's ``role_id`` and ``secret_id``
    (SecretZero's settings), reused while its lease lasts."""
    role_id, secret_id = provider.text("role_id"), provider.text("secret_id")
    if role_id is None or secret_id is None:
        raise TargetError(f"provider '{provider.alias}': auth kind approle needs role_id and secret_id")
    mount = provider.text("approle_mount") or "approle"
    key = digest(address, namespace, mount, role_id, secret_id)
    with _approle_lock:
        cached = _approle_tokens.get(key)
        if cached is not None and time.monotonic() < cached[1]:
            return cached[0]
        # token "": hvac would otherwise send the server's VAULT_TOKEN with the login.
        client = _hvac_client(hvac, address, "", namespace, verify, timeout, trusted)
        with sdk_errors(_error, f"provider '{provider.alias}'", "AppRole login"):
            response = client.auth.approle.login(role_id=role_id, secret_id=secret_id,
                                                 use_token=False, mount_point=mount)
        auth = response.get("auth") if isinstance(response, Mapping) else None
        token = auth.get("client_token") if isinstance(auth, Mapping) else None
        if not isinstance(token, str) or not token:
            raise TargetError(f"provider '{provider.alias}': AppRole login gave no token")
        lease = auth.get("lease_duration") if isinstance(auth, Mapping) else 0
        # lease 0: a token that does not expire (root-like); else renew before the end.
        lifetime = float(lease) * (1 - APPROLE_MARGIN) if isinstance(lease, int) and lease > 0 else float("inf")
        _approle_tokens[key] = (token, time.monotonic() + lifetime)
        return token


def _version(body: Any) -> int:
    try:
        version = body["data"]["metadata"]["version"]
    except (KeyError, TypeError):
        return 0
    return version if isinstance(version, int) and not isinstance(version, bool) else 0


def _verify(value: Any, ctx: TargetContext, alias: str) -> bool | str:
    if value is None:
        if os.environ.get("VAULT_SKIP_VERIFY", "").lower() in ("1", "true", "yes"):
            return False
        return os.environ.get("VAULT_CACERT") or True
    return tls_setting(value, ctx, alias)


def _error(exc: BaseException, where: str, operation: str) -> TargetError:
    """Vault's status class, never its error text (which can quote the request)."""
    name = type(exc).__name__
    if name == "Forbidden":
        return TargetError(f"{where}: permission denied (403: the token is invalid or lacks access)")
    if name == "Unauthorized":
        return TargetError(f"{where}: not authenticated (401)")
    if name == "InvalidPath":
        return TargetError(f"{where}: {operation} failed (404: no such mount or path)")
    if name == "InvalidRequest":
        errors = " ".join(str(e) for e in (getattr(exc, "errors", None) or []))
        if "check-and-set" in errors:
            return TargetError(f"{where}: changed by another writer during the {operation}; try again")
        return TargetError(f"{where}: {operation} rejected (400)")
    if name == "VaultDown":
        return TargetError(f"{where}: Vault is sealed or unavailable (503)")
    if name in ("RateLimitExceeded", "InternalServerError", "BadGateway", "VaultNotInitialized",
                "UnexpectedError", "PreconditionFailed", "UnsupportedOperation"):
        return TargetError(f"{where}: {operation} failed ({name})")
    return sdk_failure(exc, where, operation)


KINDS = (VaultKvKind(),)
