"""Where a remote subcommand goes and with which key: the group's ``--addr``, ``--project`` and
``--ca-bundle`` (or their ``SECRETSCTL_*`` variables), and the key from ``SECRETSCTL_API_KEY`` or
the one ``secretsctl login`` stored for that address. Never a key on the command line: the
arguments of a process are readable by every user of the machine (``ps``)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

import click

ADDR_ENV = "SECRETSCTL_ADDR"
KEY_ENV = "SECRETSCTL_API_KEY"
PROJECT_ENV = "SECRETSCTL_PROJECT"
CA_BUNDLE_ENV = "SECRETSCTL_CA_BUNDLE"


class AddressInvalid(click.UsageError):
    """An address that is not ``http(s)://host[:port][/prefix]``."""


@dataclass(frozen=True)
class Remote:
    """A service's address (no trailing slash), the project its paths are under, the CA bundle
    TLS is verified with (None: the system's / certifi's), and the key (None: none sent)."""

    addr: str
    project: str | None = None
    ca_bundle: str | None = None
    key: str | None = field(default=None, repr=False)

    def url(self, path: str) -> str:
        """The URL of an API path (``/sync``), under ``/projects/{project}`` when one is named."""
        prefix = f"/projects/{quote(self.project, safe='')}" if self.project else ""
        return f"{self.addr}{prefix}{path}"

    def plain_http_elsewhere(self) -> bool:
        """``http://`` to a host other than this machine: the key would cross the network in clear."""
        parts = urlsplit(self.addr)
        return parts.scheme == "http" and not loopback(parts.hostname or "")


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def normalized(addr: str) -> str:
    """``addr`` checked and without its trailing slash: the key is stored per address."""
    text = addr.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AddressInvalid(f"--addr must be an http:// or https:// URL with a host, not {addr!r}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise AddressInvalid("--addr takes no query, fragment or credentials: the key comes from "
                             f"{KEY_ENV} or `secretsctl login`")
    return text.rstrip("/")


def given_addr(ctx: click.Context) -> str | None:
    """The address the group's ``--addr`` (or SECRETSCTL_ADDR) names, normalized; None: local mode."""
    addr = ctx.find_root().params.get("addr")
    return normalized(addr) if addr else None


def of(ctx: click.Context) -> Remote | None:
    """The remote a subcommand runs against, or None for the local mode (no address given)."""
    addr = given_addr(ctx)
    if addr is None:
        return None
    group = ctx.find_root().params
    project = group.get("project") or None
    if project is not None and not project.strip():
        raise click.UsageError("--project must name a project")
    return Remote(addr, project=project, ca_bundle=ca_bundle(group.get("ca_bundle")), key=key_for(addr))


def ca_bundle(given: str | None) -> str | None:
    """``--ca-bundle`` (or SECRETSCTL_CA_BUNDLE), which must name a readable file: a wrong path
    must not fall back to another trust store unnoticed."""
    if not given:
        return None
    if not os.path.isfile(given) or not os.access(given, os.R_OK):
        raise click.UsageError(f"--ca-bundle {given}: not a readable file")
    return given


def key_for(addr: str) -> str | None:
    """SECRETSCTL_API_KEY, else the key stored for ``addr`` by ``secretsctl login``."""
    key = os.environ.get(KEY_ENV)
    if key:
        return key.strip()
    from secretsapi.cli.remote import credentials

    return credentials.load(addr)
