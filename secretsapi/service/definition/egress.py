"""The operator's rule for the server's own credentials: where they may go, what they may read
and write, and which of the operator's identities and variables a definition may name.

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

A value read with the server's credentials is used (a ``provider_read`` source, an import, the
copy a repair writes elsewhere, a template's render, the value endpoint) only from a location the
operator lists for the target type in SERVICE_PROVIDER_READ (location prefixes, empty by default):
otherwise a definition naming another team's path could copy that team's secret out of the
operator's store into a file its author reads (a confused deputy). Comparing what a target holds
with the lockfile's hash (drift, a sync deciding what to repair) uses no value and stays allowed.
Once the operator sets SERVICE_PROVIDER_WRITE, a write with those credentials goes only under the
locations it lists (unset: wherever the addresses allow, SecretZero's behaviour).

Which of the operator's identities a definition may select: AWS profiles of the server's shared
files (SERVICE_AWS_PROFILES), roles assumed with its AWS credentials (SERVICE_AWS_ROLES) and
contexts of its kubeconfig (SERVICE_KUBE_CONTEXTS); which server variables it may name
(SERVICE_DEFINITION_ENV, for ``vault_password_env``). Without a selection the server's default
identity is used, as before.

The rule is the operator's, like the credentials it governs, and belongs to one operation: the
workspace carries it into its definition and every TargetContext (no process-wide state).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from secretsapi.service.errors import TargetError

ADDRESS_SETTING = "SERVICE_CREDENTIAL_ADDRESSES"
READ_SETTING = "SERVICE_PROVIDER_READ"
WRITE_SETTING = "SERVICE_PROVIDER_WRITE"
ENV_SETTING = "SERVICE_DEFINITION_ENV"
AWS_PROFILES_SETTING = "SERVICE_AWS_PROFILES"
AWS_ROLES_SETTING = "SERVICE_AWS_ROLES"
KUBE_CONTEXTS_SETTING = "SERVICE_KUBE_CONTEXTS"
AZURE_IDENTITIES_SETTING = "SERVICE_AZURE_IDENTITIES"
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
    """The operator's rule for one operation: addresses by provider kind (SERVICE_CREDENTIAL_ADDRESSES),
    locations read with the server's credentials by target type (SERVICE_PROVIDER_READ), the AWS
    profiles and Kubernetes contexts a definition may select (SERVICE_AWS_PROFILES,
    SERVICE_KUBE_CONTEXTS; None: any, the command line's default) and the server variables it may
    name (SERVICE_DEFINITION_ENV's patterns; None: any).

    A value: a workspace carries it into its definition and every TargetContext, so two operations
    in one process (threads of a web worker, the job worker's runners) each use their own."""

    addresses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # None: a value may come from anywhere (the command line's default, a person's own credentials).
    read_prefixes: Mapping[str, tuple[str, ...]] | None = field(default_factory=dict)
    aws_profiles: tuple[str, ...] | None = None
    kube_contexts: tuple[str, ...] | None = None
    env_allowed: tuple[str, ...] | None = None
    # Locations written with the server's credentials, by target type (SERVICE_PROVIDER_WRITE); None: any.
    write_prefixes: Mapping[str, tuple[str, ...]] | None = None
    # Roles a definition may assume with the server's AWS credentials (SERVICE_AWS_ROLES); None: any.
    aws_roles: tuple[str, ...] | None = None
    # The operator's admin connections by name (SERVICE_ROTATION_CONNECTIONS): a source-credential
    # secret names one (``credentials.spec``). URLs hold credentials: never in a repr.
    connections: Mapping[str, str] = field(default_factory=dict, repr=False)
    # Client ids of the server's user-assigned Azure managed identities a definition may select
    # (SERVICE_AZURE_IDENTITIES); None: any.
    azure_identities: tuple[str, ...] | None = None

    def __hash__(self) -> int:
        return hash((_items(self.addresses), _items(self.read_prefixes or {}), self.read_prefixes is None,
                     self.aws_profiles, self.kube_contexts,
                     self.env_allowed, None if self.write_prefixes is None else _items(self.write_prefixes),
                     self.aws_roles, tuple(sorted(self.connections.items())), self.azure_identities))

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
        """TargetError unless a value read with the server's credentials may come from ``location``."""
        if self.read_prefixes is None or _under(location, self.read_prefixes.get(type_, ())):
            return
        raise TargetError(f"reading {location} with the server's own credentials is not allowed (list a "
                          f"prefix of it for '{type_}' in {READ_SETTING}, or give the provider its own credentials)")

    def check_write(self, type_: str, location: str) -> None:
        """TargetError unless a write with the server's credentials may go to ``location``."""
        if self.write_prefixes is None or _under(location, self.write_prefixes.get(type_, ())):
            return
        raise TargetError(f"writing {location} with the server's own credentials is not allowed (list a prefix "
                          f"of it for '{type_}' in {WRITE_SETTING}, or give the provider its own credentials)")

    def check_aws_profile(self, profile: str, alias: str) -> None:
        """TargetError unless the definition may select the server's AWS profile ``profile``."""
        if self.aws_profiles is None or profile in self.aws_profiles:
            return
        raise TargetError(f"provider '{alias}': the server's AWS profile '{profile}' may not be selected by a "
                          f"definition (list it in {AWS_PROFILES_SETTING}, or give the provider its own keys)")

    def check_aws_role(self, role_arn: str, alias: str) -> None:
        """TargetError unless the definition may assume ``role_arn`` with the server's credentials."""
        if self.aws_roles is None or role_arn in self.aws_roles:
            return
        raise TargetError(f"provider '{alias}': the role {role_arn} may not be assumed with the server's AWS "
                          f"credentials (list it in {AWS_ROLES_SETTING}, or give the provider its own keys)")

    def check_kube_context(self, context: str, alias: str) -> None:
        """TargetError unless the definition may select ``context`` of the server's kubeconfig
        (KUBECONFIG, ~/.kube/config: the operator's identities). A kubeconfig the definition
        names is its own (confined to its folder, ``kubeconfig_files``): any context of it."""
        if self.kube_contexts is None or context in self.kube_contexts:
            return
        raise TargetError(f"provider '{alias}': the server's Kubernetes context '{context}' may not be selected by "
                          f"a definition (list it in {KUBE_CONTEXTS_SETTING}, or give the provider its own kubeconfig)")

    def check_azure_identity(self, client_id: str, alias: str) -> None:
        """TargetError unless the definition may select the server's managed identity ``client_id``:
        the identities a host carries are the operator's credentials, as its AWS profiles are."""
        if self.azure_identities is None or client_id in self.azure_identities:
            return
        raise TargetError(f"provider '{alias}': the server's Azure managed identity '{client_id}' may not be "
                          f"selected by a definition (list it in {AZURE_IDENTITIES_SETTING}, or give the provider "
                          "a service principal of its own)")

    def readable_variable(self, name: str) -> bool:
        """Whether a definition may name the server variable ``name`` (SERVICE_DEFINITION_ENV)."""
        from secretsapi.service.definition.readable_environ import reserved

        if reserved(name):
            return False
        return self.env_allowed is None or any(fnmatch.fnmatchcase(name, item) for item in self.env_allowed)


def egress_of(addresses: Mapping[str, Any], read_prefixes: Mapping[str, Any] | None, *,
              aws_profiles: Sequence[str] | None = None, kube_contexts: Sequence[str] | None = None,
              env_allowed: Sequence[str] | None = None, write_prefixes: Mapping[str, Any] | None = None,
              aws_roles: Sequence[str] | None = None, connections: Mapping[str, str] | None = None,
              azure_identities: Sequence[str] | None = None) -> Egress:
    """The rule of the operator's settings (lists given as strings or sequences)."""
    return Egress(_frozen(addresses), None if read_prefixes is None else _frozen(read_prefixes),
                  None if aws_profiles is None else tuple(aws_profiles),
                  None if kube_contexts is None else tuple(kube_contexts),
                  None if env_allowed is None else tuple(env_allowed),
                  None if write_prefixes is None else _frozen(write_prefixes),
                  None if aws_roles is None else tuple(aws_roles), dict(connections or {}),
                  None if azure_identities is None else tuple(azure_identities))


def _under(location: str, prefixes: Sequence[str]) -> bool:
    """``location`` starts with a listed prefix, with no ``.`` or ``..`` step to climb out of it."""
    parts = location.replace("#", "/").split("/")
    return "." not in parts and ".." not in parts and any(location.startswith(p) for p in prefixes)


def _items(mapping: Mapping[str, tuple[str, ...]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(sorted(mapping.items()))


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
    return {str(k): tuple(str(v) for v in ([values] if isinstance(values, str) else values))
            for k, values in (mapping or {}).items()}
