"""A target's provider as a kind uses it: its settings, its credentials and the files it names.

Settings are the provider's ``config`` over its ``auth.config`` (``schema.provider_settings``).
A credential is the definition's own when the provider gives it (``token``, ``token_file``, keys);
anything a kind takes from elsewhere (the environment, ``~/.vault-token``, an SDK's chain) is the
server's, and goes only where ``egress`` allows (``Provider.address``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from secretsapi.service.definition.model import ProviderSpec, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.paths import Confined, named_file, read_bytes
from secretsapi.service.targets.schema import ProviderSchema, Setting, provider_settings

DEFAULT_TIMEOUT = 5.0  # seconds, per remote call; providers override it with `timeout`
MAX_TIMEOUT = 300.0
# Calls in flight at once per provider within one operation (see ``fanout``): enough to hide
# tens of milliseconds of network latency, few enough not to trip a store's rate limits.
DEFAULT_MAX_CONCURRENCY = 8
MAX_CONCURRENCY = 64

# Settings every remote provider kind takes (checked by ``Provider.timeout``, ``max_concurrency``
# and ``tls_setting`` when used).
TIMEOUT = Setting("number", "seconds before a remote call gives up (connect and read)", 5,
                  strict=False)
CONCURRENCY = Setting("integer", "calls in flight at once per operation, 1 to 64 (1: one after another)",
                      8, strict=False)
VERIFY = Setting("boolean", "verify TLS; or the path of a CA bundle (a private CA)", True, strict=False)


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

    def address(self, ctx: TargetContext, schema: ProviderSchema, given: str | None, operator: str | None,
                default: str | None, *, server_credential: str | None) -> str | None:
        """The store's address: ``given`` (the definition's), else ``operator`` (the server's own
        environment), else ``default``. ``server_credential`` names the credential when it is the
        server's (``the server's GITHUB_TOKEN``): the definition's address must then be one
        ``egress`` allows for the kind, checked here, before any request."""
        if given is not None and server_credential is not None:
            ctx.egress.check(given, kind=schema.kind, alias=self.alias, what=server_credential,
                             hosted=schema.hosted, operator=operator)
        return given or operator or default


def provider_of(target: TargetSpec, ctx: TargetContext) -> Provider:
    """The provider a target names; an undeclared alias is a provider kind with no settings."""
    return provider_in(target, ctx.providers)


def provider_in(target: TargetSpec, providers: Mapping[str, ProviderSpec]) -> Provider:
    spec = providers.get(target.provider)
    if spec is None:
        return Provider(target.provider, target.provider_kind or target.provider, None, {})
    auth_kind = spec.auth.get("kind") if isinstance(spec.auth, Mapping) else None
    return Provider(spec.alias, spec.kind, auth_kind if isinstance(auth_kind, str) else None, provider_settings(spec))


def checked_provider(target: TargetSpec, ctx: TargetContext, schema: ProviderSchema) -> Provider:
    """The target's provider, if its auth kind (when it names one) is one ``schema`` accepts."""
    provider = provider_of(target, ctx)
    check_auth_kind(provider, schema)
    return provider


def check_auth_kind(provider: Provider, schema: ProviderSchema) -> None:
    names = schema.auth_kind_names
    if provider.auth_kind is not None and provider.auth_kind not in names:
        raise TargetError(f"provider '{provider.alias}': auth kind '{provider.auth_kind}' is not "
                          f"supported for {schema.title} (supported: {', '.join(names)})")


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
