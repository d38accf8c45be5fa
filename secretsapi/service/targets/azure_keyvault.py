"""``azure/azure_keyvault``: a secret as one Azure Key Vault secret (also SecretZero's ``key_vault``).

Each write sets a new version of the secret (``Set Secret``) with the target's content type and
tags; the vault's other secrets are never touched. A secret soft-deleted behind our back is
recovered first (``Recover Deleted Secret``: needs the secrets/recover permission). Drift reads the current version back
(``Get Secret``). Requests go through azure-keyvault-secrets, which performs Key Vault's
authentication challenge and refuses plain HTTP, with Key Vault REST API version 7.6.

Target id: SecretZero's (``secretzero_ids.recorded_id``), usually ``<provider>/<kind>/``; where
another target of the same secret would share it, this kind's own:
``<provider>/<kind>/<vault host>/<secret_name>``, the kind as written. That id is computed from
the target's config alone, so without ``secret_name`` it ends at the vault host: the secret is
then named like the secret (or template field), which the lockfile entry names.

Provider settings: ``vault_url`` (a target's own wins; or ``vault_name`` for
``https://<name>.vault.azure.net``); credentials ``tenant_id``, ``client_id`` and
``client_secret`` (a service principal; each else AZURE_TENANT_ID, AZURE_CLIENT_ID,
AZURE_CLIENT_SECRET), or auth kind ``managed_identity`` (with an optional ``client_id``),
``cli``, and otherwise azure-identity's DefaultAzureCredential (the AZURE_* environment first);
``authority_host`` (else AZURE_AUTHORITY_HOST, else the public cloud), ``disable_instance_discovery``
(for authorities Microsoft does not know, e.g. Azure Stack), ``connection_verify`` (true, or the
path of a CA bundle: verification is never turned off), ``timeout`` (default 5 s),
``max_concurrency`` (default 8). The vault and the token endpoint are called through the one
transport (``rest``: azure-core's requests transport on its session): 429 and 503 retried after
their Retry-After, no redirect followed, no proxy or netrc from the environment.

A credential the definition does not give (a service principal's secret from AZURE_CLIENT_SECRET, a
managed identity, the CLI's login, DefaultAzureCredential) is the server's: the vault must then be
one of Azure's (``*.vault.azure.net`` and the national clouds') and the authority Microsoft's own
(or AZURE_AUTHORITY_HOST), unless the operator lists them (``egress``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.ids import RecordsSecretZeroIds
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
    load_sdk,
    same_config,
    sdk_errors,
    sdk_failure,
    unreachable,
)
from secretsapi.service.targets.rest import new_session
from secretsapi.service.targets.schema import AuthKind, KindSchema, Need, ProviderSchema, Setting
from secretsapi.service.util.hashing import sha256_text

AZURE = ProviderSchema(
    "azure", "Azure",
    "Azure Key Vault through azure-keyvault-secrets and azure-identity: a service principal from the "
    "provider's auth or AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET; else managed identity, "
    "cli, or DefaultAzureCredential.",
    config={
        "vault_url": Setting("string", "vault URL, for targets that name none"),
        "vault_name": Setting("string", "vault name, for https://<name>.vault.azure.net"),
        "authority_host": Setting("string", "Microsoft Entra authority; AZURE_AUTHORITY_HOST or the public "
                                            "cloud by default"),
        "disable_instance_discovery": Setting("boolean", "skip authority validation, for authorities "
                                                         "Microsoft does not know", False),
        "connection_verify": Setting("string", "true, or the path of a CA bundle to verify the vault and "
                                               "authority with", True, strict=False),
        "timeout": TIMEOUT,
        "max_concurrency": CONCURRENCY,
    },
    auth_kinds=tuple(AuthKind(name) for name in ("service_principal", "client_secret", "managed_identity", "cli",
                                                 "default", "ambient", "env")),
    auth_config={
        "tenant_id": Setting("string", "tenant (directory) id of the service principal"),
        "client_id": Setting("string", "application (client) id"),
        "client_secret": Setting("string", "client secret of the service principal"),
    },
    hosted=("https://login.microsoftonline.com", "https://login.microsoftonline.us", "https://login.chinacloudapi.cn",
            "https://*.vault.azure.net", "https://*.vault.usgovcloudapi.net", "https://*.vault.azure.cn"),
    addressed=True,
)
PROVIDERS = (AZURE,)
API_VERSION = "7.6"  # pinned: the SDK's default moves with its releases
PACKAGE = "azure-keyvault-secrets"
# Key Vault's rule for object names; anything else is refused by the vault (400 BadParameter).
_NAME = re.compile(r"^[0-9a-zA-Z-]{1,127}$")
MAX_TAGS = 15  # Key Vault's limit per secret
RECOVERY_WAIT = 30  # seconds a write waits for a soft-deleted secret to be recovered

# SecretClient and its credential are documented as thread-safe: one serves the provider's pool.
# Clients are kept per vault, settings and AZURE_* environment (DefaultAzureCredential reads it).
_clients = ClientCache()


def _name(placement: Placement) -> str:
    return str(placement.target.config.get("secret_name") or placement.key)


def _vault_url(target: TargetSpec, provider: Provider | None = None) -> str | None:
    for source in (target.config, provider.settings if provider else {}):
        url, name = source.get("vault_url"), source.get("vault_name")
        if isinstance(url, str) and url:
            return url.rstrip("/")
        if isinstance(name, str) and name:
            return f"https://{name}.vault.azure.net"
    return None


def _host(target: TargetSpec, ctx: TargetContext | None) -> str:
    """The vault's host (and port) for ids and errors: the target's vault, else its provider's."""
    url = _vault_url(target, provider_of(target, ctx) if ctx is not None else None)
    return urlsplit(url).netloc if url else "<no vault>"


class AzureKeyVaultKind(RecordsSecretZeroIds, Kind):
    schema = KindSchema(
        "azure/azure_keyvault",
        "An Azure Key Vault secret: each write sets a new version, with the content type and tags given; "
        "the vault's other secrets are kept.",
        {
            "vault_url": Setting("string", "vault URL, e.g. https://myvault.vault.azure.net; the provider's by "
                                           "default"),
            "vault_name": Setting("string", "vault name, for https://<name>.vault.azure.net"),
            "secret_name": Setting("string", "secret name in the vault (letters, digits, dashes); the secret (or "
                                             "template field) name by default"),
            "content_type": Setting("string", "content type set on each version, e.g. text/plain"),
            "tags": Setting("object", f"tags set on each version (at most {MAX_TAGS})", items="string"),
        },
        needs=(Need(("vault_url", "vault_name"), provider=("vault_url", "vault_name")),),
        target_id="SecretZero's, e.g. `azure/key_vault/`; own: `azure/<kind>/<vault host>/<secret_name>`",
        example={'vault_name': 'myvault'}
    )

    def uses_server_credentials(self, target: TargetSpec, ctx: TargetContext) -> bool:
        return not _credential_settings(provider_of(target, ctx))["own"]

    def advise(self, target: TargetSpec, where: str) -> list[str]:
        """What Key Vault (or its SDK) refuses: SecretZero accepts it at validation and fails the
        target at sync, as this service does, before any request."""
        return [f"{where}: {problem}: this target fails at sync" for problem in _store_rules(target)]

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        name = target.config.get("secret_name") or target.config.get("key")
        return f"{_host(target, ctx)}/{name}" if name else _host(target, ctx)

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, target.provider, _vault_url(target), target.config.get("secret_name"))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        if not items:
            return {}
        target = items[0][0].target
        where = checked_group(self, [p.target for p, _ in items], self._where([p for p, _ in items], ctx), ctx)
        _refuse(target, where)
        config = same_config([p for p, _ in items], ("content_type", "tags"), where)
        values = collect(items, _name, where)
        for name in values:
            self._check_name(name, where)
        client = self._client(target, ctx, where)
        tags = dict(config["tags"]) if config.get("tags") else None
        with sdk_errors(_error, where, "write"):
            for name, value in values.items():  # without secret_name, one secret per placement
                try:
                    client.set_secret(name, value, content_type=config.get("content_type"), tags=tags)
                except Exception as exc:
                    if not _deleted_but_recoverable(exc):
                        raise
                    # Soft-deleted behind our back: its name is taken until it is recovered (or
                    # purged, which loses its history); recover it, then set the new version.
                    client.begin_recover_deleted_secret(name).wait(timeout=RECOVERY_WAIT)
                    client.set_secret(name, value, content_type=config.get("content_type"), tags=tags)
        return {p.key: sha256_text(values[_name(p)]) for p, _ in items}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        where = checked_group(self, [p.target for p in items], self._where(items, ctx), ctx)
        _refuse(items[0].target, where)
        names = {_name(p) for p in items}
        for name in names:
            self._check_name(name, where)
        client = self._client(items[0].target, ctx, where)
        not_found = load_sdk("azure.core.exceptions", PACKAGE, self.type).ResourceNotFoundError
        stored: dict[str, str | None] = {}
        with sdk_errors(_error, where, "read"):
            for name in sorted(names):
                try:
                    value = client.get_secret(name).value
                except not_found:
                    value = None
                stored[name] = value if isinstance(value, str) else None
        backs = {}
        for placement in items:
            value, location = stored[_name(placement)], f"{_host(placement.target, ctx)}/{_name(placement)}"
            backs[placement.key] = (ReadBack(False, None, location) if value is None
                                    else ReadBack(True, sha256_text(value), location, value))
        return backs

    @staticmethod
    def _where(placements: Sequence[Placement], ctx: TargetContext) -> str:
        """The group's name in errors: ``<vault host>/<secret>``, or the host when it holds several."""
        names = {_name(p) for p in placements}
        host = _host(placements[0].target, ctx)
        return f"{host}/{next(iter(names))}" if len(names) == 1 else host

    @staticmethod
    def _check_name(name: str, where: str) -> None:
        if not _NAME.match(name):
            raise TargetError(f"{where}: '{name}' is not a Key Vault secret name (1 to 127 letters, digits "
                              "and dashes): set config.secret_name")

    # -- client --------------------------------------------------------------------------

    def _client(self, target: TargetSpec, ctx: TargetContext, where: str) -> Any:
        secrets_sdk = load_sdk("azure.keyvault.secrets", PACKAGE, self.type)
        load_sdk("azure.identity", "azure-identity", self.type)
        provider = checked_provider(target, ctx, AZURE)
        url = _vault_url(target, provider)
        if url is None:
            raise TargetError(f"{where}: no vault (set vault_url or vault_name in the target or its provider)")
        if urlsplit(url).scheme != "https":
            raise TargetError(f"{where}: the vault URL must be https:// (Key Vault refuses plain HTTP)")
        timeout = provider.timeout
        transport = {"connection_verify": _verify(provider, ctx), "connection_timeout": timeout,
                     "read_timeout": timeout}
        credential = _credential_settings(provider)
        if credential["kind"] == "managed_identity" and credential["client_id"]:
            ctx.egress.check_azure_identity(credential["client_id"], provider.alias)
        if not credential["own"]:
            what = "the server's Azure credentials"
            provider.address(ctx, AZURE, url, None, None, server_credential=what)
            provider.address(ctx, AZURE, credential["given_authority"], credential["authority"], None,
                             server_credential=what)
        environment = {k: v for k, v in os.environ.items() if k.startswith(("AZURE_", "IDENTITY_", "MSI_"))}
        return _clients.get((url, credential, transport, environment), lambda: secrets_sdk.SecretClient(
            url, _credential(credential, transport, self.type), api_version=API_VERSION,
            transport=_transport(self.type, transport), retry_policy=_no_retries(), permit_redirects=False,
            **transport))


def _store_rules(target: TargetSpec) -> list[str]:
    config, problems = target.config, []
    url = config.get("vault_url")
    if isinstance(url, str) and url and (urlsplit(url).scheme != "https" or not urlsplit(url).hostname):
        problems.append("config.vault_url must be an https:// URL (Key Vault refuses plain HTTP)")
    name = config.get("secret_name") or config.get("key")
    if isinstance(name, str) and name and not _NAME.match(name):
        problems.append(f"config.secret_name '{name}' is not a Key Vault name (1 to 127 letters, digits and dashes)")
    tags = config.get("tags")
    if isinstance(tags, Mapping) and len(tags) > MAX_TAGS:
        problems.append(f"config.tags has more than {MAX_TAGS} tags")
    return problems


def _refuse(target: TargetSpec, where: str) -> None:
    problems = _store_rules(target)
    if problems:
        raise TargetError(f"{where}: {'; '.join(problems)}")


def _credential_settings(provider: Provider) -> dict[str, Any]:
    """What the credential is made of; secrets stay in this dict (ClientCache digests its key)."""
    discovery = provider.settings.get("disable_instance_discovery", False)
    if not isinstance(discovery, bool):
        raise TargetError(f"provider '{provider.alias}': disable_instance_discovery must be true or false")
    settings: dict[str, Any] = {
        "kind": provider.auth_kind or "default",
        "tenant_id": provider.text("tenant_id"), "client_id": provider.text("client_id"),
        "client_secret": provider.text("client_secret"),
        "given_authority": provider.text("authority_host", "authority"),
        "authority": os.environ.get("AZURE_AUTHORITY_HOST"),
        "disable_instance_discovery": discovery,
        # The secret of a service principal is the definition's own only when the definition gives it.
        "own": provider.text("client_secret") is not None,
    }
    if settings["kind"] in ("service_principal", "client_secret") or (
            settings["kind"] in ("default", "ambient", "env") and settings["client_secret"]):
        settings["kind"] = "service_principal"
        for key, env in (("tenant_id", "AZURE_TENANT_ID"), ("client_id", "AZURE_CLIENT_ID"),
                         ("client_secret", "AZURE_CLIENT_SECRET")):
            settings[key] = settings[key] or os.environ.get(env)
        missing = [key for key in ("tenant_id", "client_id", "client_secret") if not settings[key]]
        if missing:
            raise TargetError(f"provider '{provider.alias}': a service principal needs {', '.join(missing)} "
                              "(in the provider's auth, or AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET)")
    return settings


def _credential(settings: Mapping[str, Any], transport: Mapping[str, Any], type_: str) -> Any:
    identity = load_sdk("azure.identity", "azure-identity", type_)
    # Token requests go through the one transport too (its retries; azure-core's own are off). A
    # managed identity keeps azure-identity's retry policy for IMDS, the server's own endpoint.
    options: dict[str, Any] = {"connection_verify": transport["connection_verify"],
                               "disable_instance_discovery": settings["disable_instance_discovery"],
                               "transport": _transport(type_, transport), "retry_total": 0}
    authority = settings["given_authority"] or settings["authority"]
    if authority:
        options["authority"] = authority
    kind = settings["kind"]
    if kind == "service_principal":
        return identity.ClientSecretCredential(settings["tenant_id"], settings["client_id"], settings["client_secret"],
                                               **options)
    if kind == "managed_identity":
        return identity.ManagedIdentityCredential(client_id=settings["client_id"],
                                                  transport=_transport(type_, transport),
                                                  connection_verify=transport["connection_verify"])
    if kind == "cli":
        return identity.AzureCliCredential(tenant_id=settings["tenant_id"] or "")
    return identity.DefaultAzureCredential(**options)


def _verify(provider: Provider, ctx: TargetContext) -> bool | str:
    value = provider.settings.get("connection_verify", provider.settings.get("verify", True))
    return tls_setting(value, ctx, provider.alias, "connection_verify",
                       never_off="TLS verification is never turned off for Key Vault")


def _transport(type_: str, settings: Mapping[str, Any]) -> Any:
    """azure-core's requests transport on a session of the one transport (``rest``), not the
    environment's proxies (``use_env_settings``); ``settings``: its verification and timeouts."""
    transports = load_sdk("azure.core.pipeline.transport", PACKAGE, type_)
    return transports.RequestsTransport(session=new_session(type_), session_owner=False, use_env_settings=False,
                                        **settings)


def _no_retries() -> Any:
    """azure-core's retries off: the transport's session retries throttling, as for every store."""
    return load_sdk("azure.core.pipeline.policies", PACKAGE, AzureKeyVaultKind.type).RetryPolicy.no_retries()


def _deleted_but_recoverable(exc: BaseException) -> bool:
    """Key Vault's 409 for a name held by a soft-deleted secret."""
    inner = getattr(getattr(exc, "error", None), "innererror", None)
    return getattr(exc, "status_code", None) == 409 and isinstance(inner, Mapping) and (
        inner.get("code") == "ObjectIsDeletedButRecoverable")


def _error(exc: BaseException, where: str, operation: str) -> TargetError:
    """Key Vault's status and error code, never its message (which can quote the request)."""
    name = type(exc).__name__
    if name == "CredentialUnavailableError":
        return TargetError(f"{where}: no usable Azure credentials (set tenant_id, client_id and client_secret "
                           "in the provider's auth, or AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET)")
    if name == "ClientAuthenticationError":
        status = getattr(exc, "status_code", None)
        return TargetError(f"{where}: not authenticated ({status or 'the identity platform refused the credentials'})")
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status:
        code = getattr(getattr(exc, "error", None), "code", None)
        shown = f"{status} {code}" if isinstance(code, str) and re.fullmatch(r"[A-Za-z]{1,64}", code) else str(status)
        if status == 403:
            return TargetError(f"{where}: permission denied ({shown})")
        if status == 429:
            return TargetError(f"{where}: throttled by Key Vault ({shown})")
        return TargetError(f"{where}: {operation} failed ({shown})")
    if isinstance(exc, ValueError) and "challenge" in str(exc):
        return TargetError(f"{where}: the vault's authentication challenge names another resource")
    if name in ("ServiceRequestError", "ServiceResponseError", "ServiceRequestTimeoutError",
                "ServiceResponseTimeoutError"):
        inner = getattr(exc, "inner_exception", None)  # what requests raised, wrapped by azure-core
        return (unreachable(where, inner if isinstance(inner, BaseException) else exc)
                or TargetError(f"{where}: cannot reach the endpoint ({name})"))
    return sdk_failure(exc, where, operation)


KINDS = (AzureKeyVaultKind(),)
