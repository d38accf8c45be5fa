"""``infisical/infisical``: a secret as one shared secret in a folder of an Infisical project environment.

Through Infisical's REST API, version 3 "raw" secrets: ``GET /api/v3/secrets/raw/{name}`` (with
``workspaceId``, ``environment``, ``secretPath``, ``type=shared``; references not expanded, imports
not followed, so only a secret of that very folder counts), then ``POST`` to create it or ``PATCH``
to update it, only when its value differs. The project's other secrets are never touched. Why v3
rather than v4 (``/api/v4/secrets``, listed first in Infisical's reference): v3 is what Infisical's
official Python SDK calls, it is served by every Infisical since 2023 (self-hosted instances
included, which may predate v4), and Infisical keeps an endpoint's earlier versions in place when
it adds one.

Infisical trims a value's surrounding whitespace (keeping one final newline): such a value would
be stored altered and drift forever, so the write refuses it instead, without quoting it. A write
an approval policy holds back (Infisical answers ``approval``) fails the target: nothing was
stored. Drift reads the value back; a value the token may not see (``secretValueHidden``) is
reported as unverifiable, with the secret's ``updatedAt``. The folder must exist.

Target id: SecretZero's (``secretzero_ids.recorded_id``), usually ``<provider>/<kind>/``; where
another target of the same secret would share it, this kind's own:
``<provider>/infisical/<workspace>/<environment><secret_path>/<secret_name>``; without
``secret_name`` (or ``key``) the name is the secret's (or template field's), which the lockfile
entry holding the id names, and the id ends at the path. SecretZero's id is accepted for a target
recorded under its own (``secretzero_ids``).

Provider settings (SecretZero's, under the provider's ``config`` or its auth's): ``workspace_id``
(or ``project_id``; a target's own wins), ``environment`` (default ``dev``), ``api_url`` (default
https://app.infisical.com/api; else INFISICAL_API_URL), ``timeout`` (5 s), ``max_concurrency``
(8), ``verify``. Credentials: ``token`` or ``token_file`` (an access or service token), else a
machine identity's ``client_id`` and ``client_secret`` (Universal Auth: ``POST
/api/v1/auth/universal-auth/login``, its access token kept until shortly before it expires), else
INFISICAL_TOKEN, INFISICAL_SERVICE_TOKEN, then INFISICAL_UNIVERSAL_AUTH_CLIENT_ID and
INFISICAL_UNIVERSAL_AUTH_CLIENT_SECRET. 429 answers are retried after their ``Retry-After``
(``rest``). Credentials from the environment are the server's: with them, an ``api_url`` the
definition names must be Infisical Cloud's or one the operator lists (``egress``; a self-hosted
instance needs the listing); INFISICAL_API_URL is the operator's own.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any
from urllib.parse import quote

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.ids import RecordsSecretZeroIds
from secretsapi.service.targets.providers import (
    CONCURRENCY,
    TIMEOUT,
    VERIFY,
    Provider,
    checked_provider,
    provider_of,
)
from secretsapi.service.targets.remote import checked_group, collect, digest
from secretsapi.service.targets.rest import base_url, json_body, request, session, status_error, timestamp, tls_verify
from secretsapi.service.targets.schema import AuthKind, KindSchema, Need, ProviderSchema, Setting
from secretsapi.service.util.hashing import sha256_text

API_URL = "https://app.infisical.com/api"  # SecretZero's default: the API root, /api included
DEFAULT_ENVIRONMENT = "dev"  # SecretZero's default
INFISICAL = ProviderSchema(
    "infisical", "Infisical",
    "Infisical's REST API (app.infisical.com or a self-hosted instance); INFISICAL_TOKEN (then "
    "INFISICAL_SERVICE_TOKEN) and INFISICAL_API_URL by default.",
    config={
        "workspace_id": Setting("string", "project (workspace) id, for targets that name none (alias: project_id)"),
        "environment": Setting("string", "environment slug, for targets that name none", DEFAULT_ENVIRONMENT),
        "api_url": Setting("string", "API root, /api included", API_URL),
        "verify": VERIFY,
        "timeout": TIMEOUT,
        "max_concurrency": CONCURRENCY,
    },
    auth_kinds=tuple(AuthKind(name) for name in ("token", "service_token", "universal_auth", "env", "ambient")),
    auth_config={
        "token": Setting("string", "machine identity access token or service token"),
        "token_file": Setting("string", "file holding the token"),
        "client_id": Setting("string", "Universal Auth: the machine identity's client id"),
        "client_secret": Setting("string", "Universal Auth: its client secret"),
    },
    # Infisical Cloud, in the US and in the EU.
    hosted=("https://app.infisical.com", "https://us.infisical.com", "https://eu.infisical.com"),
    addressed=True,
)
PROVIDERS = (INFISICAL,)
DEFAULT_PATH = "/"
# An access token is used until this many seconds before Infisical says it expires.
_EXPIRY_MARGIN = 30.0
_MISSING = "no such project, environment or folder"


def _key(placement: Placement) -> str:
    config = placement.target.config
    return str(config.get("secret_name") or config.get("key") or placement.key)


def _path(target: TargetSpec) -> str:
    """The folder, as Infisical keeps it: leading slash, no trailing one (the root is ``/``)."""
    given = target.config.get("secret_path")
    text = given.strip() if isinstance(given, str) and given.strip() else DEFAULT_PATH
    return "/" + text.strip("/")


def _stored_form(value: str) -> str:
    """What Infisical stores for ``value``: trimmed, keeping a final newline."""
    return value.strip() + "\n" if value.endswith("\n") else value.strip()


class InfisicalKind(RecordsSecretZeroIds, Kind):
    schema = KindSchema(
        "infisical/infisical",
        "A shared secret in a folder of an Infisical project environment; the project's other secrets are "
        "kept. Written only when its value differs.",
        {
            "workspace_id": Setting("string", "project (workspace) id; the provider's by default (alias: project_id)",
                                    aliases=("project_id",)),
            "environment": Setting("string", "environment slug (dev, staging, prod...); the provider's by default",
                                   DEFAULT_ENVIRONMENT),
            "secret_path": Setting("string", "folder the secret is in; it must exist", DEFAULT_PATH),
            "secret_name": Setting("string", "secret name; the secret (or template field) name by default "
                                             "(alias: key)", aliases=("key",)),
        },
        needs=(Need(("workspace_id", "project_id"), provider=("workspace_id", "project_id")),),
        target_id="SecretZero's, e.g. `infisical/infisical/`; own: `infisical/infisical/<workspace>/<environment>"
                  "<secret_path>[/<secret_name>]`",
        example={'workspace_id': 'ws-app'}
    )

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        return not _own_credentials(provider_of(target, ctx), ctx)

    def check(self, target: TargetSpec, where: str) -> list[str]:
        """Folder paths and names as Infisical keeps them."""
        config = target.config
        problems: list[str] = []
        path = config.get("secret_path")
        if isinstance(path, str) and path.strip() and (
            not path.startswith("/") or "//" in path or any(part in (".", "..") for part in path.split("/"))
            or any(c.isspace() for c in path)
        ):
            problems.append(f"{where}: config.secret_path must be a folder path starting with / "
                            "(e.g. /app/db), without empty, . or .. parts or spaces")
        for name in ("secret_name", "key"):
            value = config.get(name)
            if isinstance(value, str) and value and (any(c.isspace() for c in value) or "/" in value):
                problems.append(f"{where}: config.{name} must be a name without spaces or /")
        return problems

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        name = target.config.get("secret_name") or target.config.get("key")
        folder = _folder(target, ctx)
        return f"{folder}/{name}" if name else folder

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, _folder(target, ctx), target.config.get("secret_name"),
                target.config.get("key"))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        where = checked_group(self, [p.target for p, _ in items], _folder(target, ctx), ctx)
        values = collect(items, _key, where)
        for key, value in values.items():
            if _stored_form(value) != value:
                raise TargetError(f"{where}: the value of '{key}' begins or ends with whitespace, which Infisical "
                                  "strips: it would not be stored as given")
        api = _Api(target, ctx, where)
        for key, value in values.items():
            current = api.secret(key, "write")
            if current is None:
                api.send("POST", key, {"secretValue": value})
            elif current.get("secretValueHidden") is True or current.get("secretValue") != value:
                api.send("PATCH", key, {"secretValue": value})
        return {p.key: sha256_text(values[_key(p)]) for p, _ in items}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        target = items[0].target
        folder = _folder(target, ctx)
        where = checked_group(self, [p.target for p in items], folder, ctx)
        api = _Api(target, ctx, where)
        found = {key: api.secret(key, "read") for key in sorted({_key(p) for p in items})}
        backs = {}
        for placement in items:
            key = _key(placement)
            current, location = found[key], f"{folder}/{key}"
            value = None if current is None else current.get("secretValue")
            if current is None:
                backs[placement.key] = ReadBack(False, None, location)
            elif current.get("secretValueHidden") is True or not isinstance(value, str):
                backs[placement.key] = ReadBack(True, None, location, verifiable=False,
                                                updated_at=timestamp(current.get("updatedAt")))
            else:
                backs[placement.key] = ReadBack(True, sha256_text(value), location, value)
        return backs


def _workspace(target: TargetSpec, ctx: TargetContext | None) -> str | None:
    """The target's project, else its provider's (SecretZero keeps it on the provider)."""
    given = target.config.get("workspace_id") or target.config.get("project_id")
    if not given and ctx is not None:
        settings = provider_of(target, ctx).settings
        given = settings.get("workspace_id") or settings.get("project_id")
    return str(given) if given else None


def _environment(target: TargetSpec, ctx: TargetContext | None) -> str:
    given = target.config.get("environment")
    if not given and ctx is not None:
        given = provider_of(target, ctx).settings.get("environment")
    return str(given) if given else DEFAULT_ENVIRONMENT


def _folder(target: TargetSpec, ctx: TargetContext) -> str:
    """``<workspace>/<environment><path>`` (the root path adds nothing), for ids and errors."""
    path = _path(target)
    return (f"{_workspace(target, ctx) or '<no workspace>'}/{_environment(target, ctx)}"
            + ("" if path == "/" else path))



class _Api:
    """One group's calls: the API root, the access token, the folder, Infisical's throttling and errors."""

    def __init__(self, target: TargetSpec, ctx: TargetContext, where: str) -> None:
        provider = checked_provider(target, ctx, INFISICAL)
        workspace = _workspace(target, ctx)
        if not workspace:
            raise TargetError(f"{where}: no workspace (set workspace_id in the target or its provider)")
        server = None if _own_credentials(provider, ctx) or not _server_credentials() else (
            "the server's Infisical credentials")
        address = provider.address(ctx, INFISICAL, provider.text("api_url"), os.environ.get("INFISICAL_API_URL"),
                                   API_URL, server_credential=server)
        self.url = base_url(str(address), provider.alias, "api_url")
        self.timeout = provider.timeout
        self.where = where
        self.verify = tls_verify(provider, ctx)
        self.scope = {"workspaceId": workspace, "environment": _environment(target, ctx),
                      "secretPath": _path(target), "type": "shared"}
        self.login: str | None = None  # the kept Universal Auth login the token comes from, if any
        token = _access_token(provider, ctx, self)
        self.http = session((self.url, token), {"Authorization": f"Bearer {token}", "User-Agent": "secretsapi"},
                            InfisicalKind.type, self.verify)

    def secret(self, key: str, operation: str) -> dict[str, Any] | None:
        """The secret ``key`` of the folder, or None when there is none (or no such folder)."""
        params = {**self.scope, "expandSecretReferences": "false", "include_imports": "false"}
        response = request(self.http, "GET", self._item(key), where=self.where, operation=operation,
                           timeout=self.timeout, params=params)
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self._failure(response, operation)
        body = json_body(response, self.where, operation)
        found = body.get("secret") if isinstance(body, dict) else None
        if not isinstance(found, dict):
            raise TargetError(f"{self.where}: {operation} failed (unexpected answer)")
        return found

    def send(self, method: str, key: str, body: dict[str, Any]) -> None:
        response = request(self.http, method, self._item(key), where=self.where, operation="write",
                           timeout=self.timeout, json={**self.scope, **body})
        if response.status_code != 200:
            raise self._failure(response, "write")
        answer = json_body(response, self.where, "write")
        if isinstance(answer, dict) and "approval" in answer:
            raise TargetError(f"{self.where}: '{key}' was not written: an approval policy of the environment "
                              "holds the change for review in Infisical")
        if not isinstance(answer, dict) or not isinstance(answer.get("secret"), dict):
            raise TargetError(f"{self.where}: write failed (unexpected answer)")

    def _failure(self, response: Any, operation: str) -> TargetError:
        if response.status_code == 401 and self.login is not None:
            _forget(self.login)  # revoked before it expired: the next operation logs in again
        return status_error(response, self.where, operation, _MISSING)

    def _item(self, key: str) -> str:
        return f"{self.url}/v3/secrets/raw/{quote(key, safe='')}"


# -- credentials -------------------------------------------------------------------------------

# Universal Auth access tokens by digest of (API root, client id, client secret): (token, until).
_logins: OrderedDict[str, tuple[str, float]] = OrderedDict()
_logins_lock = threading.Lock()
_LOGINS_KEPT = 64


def _own_credentials(provider: Provider, ctx: TargetContext) -> bool:
    """Whether the provider gives its own token, or its own Universal Auth client id and secret."""
    client = provider.text("client_id") is not None and provider.text("client_secret") is not None
    return client or (provider.auth_kind != "universal_auth" and provider.token(ctx) is not None)


def _server_credentials() -> bool:
    """Whether the server's environment holds an Infisical token or Universal Auth identity."""
    tokens = ("INFISICAL_TOKEN", "INFISICAL_SERVICE_TOKEN")
    identity = ("INFISICAL_UNIVERSAL_AUTH_CLIENT_ID", "INFISICAL_UNIVERSAL_AUTH_CLIENT_SECRET")
    return any(os.environ.get(name) for name in tokens) or all(os.environ.get(name) for name in identity)


def _access_token(provider: Provider, ctx: TargetContext, api: _Api) -> str:
    """The bearer token: the provider's token, else a Universal Auth login with its client id and
    secret, else the environment's token, else the environment's client id and secret."""
    token = provider.token(ctx)
    client = (provider.text("client_id"), provider.text("client_secret"))
    if provider.auth_kind == "universal_auth":
        token = None
    elif token is None and not all(client):
        token = os.environ.get("INFISICAL_TOKEN") or os.environ.get("INFISICAL_SERVICE_TOKEN") or None
    if token is not None:
        return token
    if not all(client):
        client = (os.environ.get("INFISICAL_UNIVERSAL_AUTH_CLIENT_ID"),
                  os.environ.get("INFISICAL_UNIVERSAL_AUTH_CLIENT_SECRET"))
    client_id, client_secret = client
    if not client_id or not client_secret:
        needs = ("client_id and client_secret in the provider's auth" if provider.auth_kind == "universal_auth"
                 else "token, or client_id and client_secret, in the provider's auth, or INFISICAL_TOKEN")
        raise TargetError(f"provider '{provider.alias}': no Infisical credentials (set {needs})")
    return _login(api, client_id, client_secret)


def _login(api: _Api, client_id: str, client_secret: str) -> str:
    """A Universal Auth access token, logging in when none is kept or it is about to expire.

    Logins happen under one lock, so concurrent targets of one identity log in once.
    """
    key = digest(api.url, client_id, client_secret)
    with _logins_lock:
        api.login = key
        kept = _logins.get(key)
        if kept is not None and kept[1] > time.monotonic():
            return kept[0]
        http = session((api.url, "universal-auth"), {"User-Agent": "secretsapi"}, InfisicalKind.type, api.verify)
        response = request(http, "POST", f"{api.url}/v1/auth/universal-auth/login", where=api.where,
                           operation="Universal Auth login", timeout=api.timeout,
                           json={"clientId": client_id, "clientSecret": client_secret})
        if response.status_code != 200:
            raise status_error(response, api.where, "Universal Auth login", "no such identity")
        body = json_body(response, api.where, "Universal Auth login")
        token = body.get("accessToken") if isinstance(body, dict) else None
        expires = body.get("expiresIn") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise TargetError(f"{api.where}: Universal Auth login failed (no access token in the answer)")
        lifetime = float(expires) if isinstance(expires, int | float) and not isinstance(expires, bool) else 0.0
        _logins[key] = (token, time.monotonic() + max(lifetime - _EXPIRY_MARGIN, lifetime / 2))
        _logins.move_to_end(key)
        while len(_logins) > _LOGINS_KEPT:
            _logins.popitem(last=False)
        return token


def _forget(key: str) -> None:
    with _logins_lock:
        _logins.pop(key, None)


KINDS = (InfisicalKind(),)
