"""Where the server's own credentials may go, and what a ``provider_read`` may read with them.

A definition is untrusted: it may say where values go, never where the operator's credentials go.
A credential the definition does not supply itself (the server's environment: GITHUB_TOKEN,
VAULT_TOKEN...; ``~/.vault-token``; an SDK's default chain, instance roles, a managed identity) is
sent only to an address allowed for its provider kind:

- the public service of a hosted kind (its declaration's ``hosted``: api.github.com, gitlab.com,
  api.vercel.com, Infisical Cloud, AWS's and Azure's own endpoints);
- an address the server's own environment names (VAULT_ADDR, GITLAB_URL...: the operator's);
- an address the operator lists for the kind in SERVICE_CREDENTIAL_ADDRESSES (none by default:
  self-hosted Vault, Jenkins, GitLab, Infisical, custom endpoint_url and authority_host).

A listed ``https://`` address allows HTTPS only; plain HTTP needs the address listed as ``http://``.
Anything else is a TargetError naming the setting, raised before any request is made.

With the server's credentials, a ``provider_read`` source reads only locations the operator lists
for the target kind in SERVICE_PROVIDER_READ (location prefixes, empty by default): otherwise a
definition could copy another team's secret out of the operator's store (a confused deputy).

The policy is the operator's, like the credentials it governs: one per process, set from the
settings (``configure_egress``), read by every TargetContext (``current``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from secretsapi.service.errors import TargetError

ADDRESS_SETTING = "SERVICE_CREDENTIAL_ADDRESSES"
READ_SETTING = "SERVICE_PROVIDER_READ"
_DEFAULT_PORTS = {"https": 443, "http": 80}
_LABEL = "[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"


@dataclass(frozen=True)
class Origin:
    """``scheme://host:port`` of a URL, as the HTTP clients connect to it."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}" + ("" if _DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}")


def origin(url: str) -> Origin | None:
    """The origin ``url`` connects to, parsed as requests parses it (urllib3's ``parse_url``), or
    None for what no client should be trusted to read alike: not http(s), no host, user info, a
    backslash, whitespace or control characters."""
    from urllib3.util import parse_url  # requests' own parser: what is checked is what is dialled

    if not isinstance(url, str) or any(c.isspace() or ord(c) < 32 or c == "\\" for c in url):
        return None
    try:
        parts = parse_url(url)
    except ValueError:
        return None
    scheme = (parts.scheme or "").lower()
    if scheme not in _DEFAULT_PORTS or not parts.host or parts.auth is not None:
        return None
    return Origin(scheme, parts.host.lower().rstrip("."), parts.port or _DEFAULT_PORTS[scheme])


def _pattern(entry: str) -> tuple[str, re.Pattern[str], int | None] | None:
    """A listed or hosted address: (scheme, host pattern, port or None for the scheme's default)."""
    scheme, sep, rest = entry.strip().lower().partition("://")
    hostport = rest.split("/", 1)[0]
    if not sep or scheme not in _DEFAULT_PORTS or not hostport:
        return None
    host, port = hostport, ""
    if ":" in hostport and not hostport.endswith("]"):
        host, _, port = hostport.rpartition(":")
    if not host or (port and not port.isdigit()):
        return None
    regex = r"\.".join(_LABEL if label == "*" else re.escape(label) for label in host.split("."))
    return scheme, re.compile(regex), int(port) if port else None


def _allows(entry: str, where: Origin) -> bool:
    parsed = _pattern(entry)
    if parsed is None:
        return False
    scheme, host, port = parsed
    # A listed http:// address may also be reached over HTTPS; https:// never over plain HTTP.
    if where.scheme != scheme and not (scheme == "http" and where.scheme == "https"):
        return False
    wanted = port if port is not None else _DEFAULT_PORTS[scheme]
    if where.port != wanted and not (port is None and where.port == _DEFAULT_PORTS[where.scheme]):
        return False
    return host.fullmatch(where.host) is not None


@dataclass(frozen=True)
class Egress:
    """The operator's rule: addresses by provider kind (SERVICE_CREDENTIAL_ADDRESSES) and readable
    location prefixes by target type (SERVICE_PROVIDER_READ)."""

    addresses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    read_prefixes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def allows(self, url: str, *, kind: str, hosted: tuple[str, ...] = (), operator: str | None = None) -> bool:
        """Whether the server's own credentials for provider kind ``kind`` may go to ``url``."""
        where = origin(url)
        if where is None:
            return False
        if operator and origin(operator) == where:
            return True
        return any(_allows(entry, where) for entry in (*hosted, *self.addresses.get(kind, ())))

    def check(self, url: str, *, kind: str, alias: str, what: str, hosted: tuple[str, ...] = (),
              operator: str | None = None) -> None:
        """TargetError unless ``allows``; ``what`` names the credential (``the server's GITHUB_TOKEN``)."""
        if self.allows(url, kind=kind, hosted=hosted, operator=operator):
            return
        where = origin(url)
        if where is None:
            raise TargetError(f"provider '{alias}': {what} may not go to this address (an http(s) URL without "
                              f"user info is needed, listed for '{kind}' in {ADDRESS_SETTING})")
        plain = where.scheme == "http" and self.allows(url.replace("http://", "https://", 1), kind=kind,
                                                         hosted=hosted, operator=operator)
        reason = (f"plain http:// to {where} is not allowed (list http://{where.host}:{where.port} for '{kind}' "
                  f"in {ADDRESS_SETTING})") if plain else (
            f"{where} is not an address the operator allows for '{kind}' (list it in {ADDRESS_SETTING}, "
            "or give the provider its own credentials)")
        raise TargetError(f"provider '{alias}': {what} may not go there: {reason}")

    def check_read(self, type_: str, location: str) -> None:
        """TargetError unless a ``provider_read`` with the server's credentials may read ``location``."""
        parts = location.replace("#", "/").split("/")
        listed = self.read_prefixes.get(type_, ())
        if "." not in parts and ".." not in parts and any(location.startswith(p) for p in listed):
            return
        raise TargetError(f"reading {location} with the server's own credentials is not allowed (list a "
                          f"prefix of it for '{type_}' in {READ_SETTING}, or give the provider its own credentials)")


_current = Egress()
_lock = threading.Lock()


def configure_egress(addresses: Mapping[str, Any], read_prefixes: Mapping[str, Any]) -> None:
    """Apply the operator's settings to this process (idempotent; called before each operation)."""
    global _current
    wanted = Egress(_frozen(addresses), _frozen(read_prefixes))
    if wanted != _current:
        with _lock:
            _current = wanted


def current() -> Egress:
    return _current


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
    return {str(k): tuple(str(v) for v in ([values] if isinstance(values, str) else values))
            for k, values in (mapping or {}).items()}
