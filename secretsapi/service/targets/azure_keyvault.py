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
``max_concurrency`` (default 8). Answers 429 and 503 are retried by the SDK's retry policy, at
most THROTTLE_RETRIES times, after the Retry-After they name (capped at RETRY_AFTER_MAX).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import ReadBack, TargetContext, option
from secretsapi.service.targets.remote import (
    RETRY_AFTER_MAX,
    THROTTLE_RETRIES,
    ClientCache,
    Provider,
    check_labels,
    check_text,
    checked_group,
    checked_provider,
    collect,
    load_sdk,
    provider_of,
    same_config,
    sdk_errors,
    sdk_failure,
    tls_setting,
    unreachable,
)
from secretsapi.service.targets.secretzero_ids import RecordsSecretZeroIds
from secretsapi.service.util.hashing import sha256_text

AUTH_KINDS = ("service_principal", "client_secret", "managed_identity", "cli", "default", "ambient", "env")
API_VERSION = "7.6"  # pinned: the SDK's default moves with its releases
PACKAGE = "azure-keyvault-secrets"
# Key Vault's rule for object names; anything else is refused by the vault (400 BadParameter).
_NAME = re.compile(r"^[0-9a-zA-Z-]{1,127}$")
MAX_TAGS = 15  # Key Vault's limit per secret
RECOVERY_WAIT = 30  # seconds a write waits for a soft-deleted secret to be recovered
_RETRIES = {"retry_total": THROTTLE_RETRIES, "retry_backoff_factor": 0.5, "retry_backoff_max": 5}

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


class AzureKeyVaultKind(RecordsSecretZeroIds):
    type = "azure/azure_keyvault"

    def describe(self) -> dict[str, Any]:
        return {
            "description": "An Azure Key Vault secret: each write sets a new version, with the "
                           "content type and tags given; the vault's other secrets are kept.",
            "config": {
                "vault_url": option("string", None, "vault URL, e.g. https://myvault.vault.azure.net; the "
                                                    "provider's by default"),
                "vault_name": option("string", None, "vault name, for https://<name>.vault.azure.net"),
                "secret_name": option("string", None, "secret name in the vault (letters, digits, dashes); "
                                                      "the secret (or template field) name by default"),
                "content_type": option("string", None, "content type set on each version, e.g. text/plain"),
                "tags": option("object", None, f"tags set on each version (at most {MAX_TAGS})"),
            },
        }

    def validate(self, target: TargetSpec, where: str) -> list[str]:
        config = target.config
        problems = check_text(config, "vault_url", where) + check_text(config, "vault_name", where)
        problems += check_text(config, "secret_name", where) + check_text(config, "content_type", where)
        return problems + check_labels(config, "tags", where)

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
        where = checked_group(self.validate, [p.target for p, _ in items], self._where([p for p, _ in items], ctx))
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
        where = checked_group(self.validate, [p.target for p in items], self._where(items, ctx))
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
        provider = checked_provider(target, ctx, AUTH_KINDS, "Azure")
        url = _vault_url(target, provider)
        if url is None:
            raise TargetError(f"{where}: no vault (set vault_url or vault_name in the target or its provider)")
        if urlsplit(url).scheme != "https":
            raise TargetError(f"{where}: the vault URL must be https:// (Key Vault refuses plain HTTP)")
        timeout = provider.timeout
        transport = {"connection_verify": _verify(provider, ctx), "connection_timeout": timeout,
                     "read_timeout": timeout}
        credential = _credential_settings(provider)
        environment = {k: v for k, v in os.environ.items() if k.startswith(("AZURE_", "IDENTITY_", "MSI_"))}
        return _clients.get((url, credential, transport, environment), lambda: secrets_sdk.SecretClient(
            url, _credential(credential, transport, self.type), api_version=API_VERSION,
            retry_policy=_retry_policy_class()(**_RETRIES), **transport))


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
        "authority": provider.text("authority_host", "authority") or os.environ.get("AZURE_AUTHORITY_HOST"),
        "disable_instance_discovery": discovery,
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
    # Token requests get bounded retries too (and a service principal's the capped Retry-After;
    # managed identity has its own retry policy for IMDS, which DefaultAzureCredential may use).
    options: dict[str, Any] = {"connection_verify": transport["connection_verify"],
                               "disable_instance_discovery": settings["disable_instance_discovery"], **_RETRIES}
    if settings["authority"]:
        options["authority"] = settings["authority"]
    kind = settings["kind"]
    if kind == "service_principal":
        return identity.ClientSecretCredential(settings["tenant_id"], settings["client_id"], settings["client_secret"],
                                               retry_policy_class=_retry_policy_class(), **options)
    if kind == "managed_identity":
        return identity.ManagedIdentityCredential(client_id=settings["client_id"],
                                                  connection_verify=transport["connection_verify"], **_RETRIES)
    if kind == "cli":
        return identity.AzureCliCredential(tenant_id=settings["tenant_id"] or "")
    return identity.DefaultAzureCredential(**options)


def _verify(provider: Provider, ctx: TargetContext) -> bool | str:
    value = provider.settings.get("connection_verify", provider.settings.get("verify", True))
    return tls_setting(value, ctx, provider.alias, "connection_verify",
                       never_off="TLS verification is never turned off for Key Vault")


@functools.cache
def _retry_policy_class() -> Any:
    """azure-core's RetryPolicy, with the Retry-After it honours capped as for the other stores."""
    policies = load_sdk("azure.core.pipeline.policies", PACKAGE, AzureKeyVaultKind.type)

    class CappedRetryPolicy(policies.RetryPolicy):  # type: ignore[misc, name-defined]
        def get_retry_after(self, response: Any) -> float | None:
            after = super().get_retry_after(response)
            return None if after is None else min(float(after), RETRY_AFTER_MAX)

    return CappedRetryPolicy


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
