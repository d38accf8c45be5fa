"""A kubeconfig the definition names, and what it names in turn, confined like a local target.

The Kubernetes client reads the files a kubeconfig lists (a CA, a client certificate and key, a
``tokenFile``, relative to the kubeconfig's folder) and runs its ``exec`` and ``auth-provider``
commands. A definition that names a kubeconfig in its folder could otherwise reach any server
file through it (``tokenFile: /proc/self/environ`` is sent as the bearer token) or run any
command. So each listed file passes the check of the kubeconfig itself (``remote.named_path``:
inside SERVICE_TARGET_ROOTS, never the service's own files or /proc), and commands need
SERVICE_ALLOW_SCRIPTS, as the ``script`` generator does. KUBECONFIG and ~/.kube/config, the
operator's, are not checked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.paths import read_bytes
from secretsapi.service.targets.remote import confined_file, named_path

SCRIPTS_SETTING = "SERVICE_ALLOW_SCRIPTS"
# Per section of a kubeconfig: the key of each entry's body, and the body's keys naming a file.
_FILE_KEYS = {
    "clusters": ("cluster", ("certificate-authority",)),
    "users": ("user", ("client-certificate", "client-key", "tokenFile")),
}
# What makes the client run a command: a credential plugin, and the gcp/azure/oidc providers
# (``cmd-path``; oidc also names a CA file).
_COMMAND_KEYS = ("exec", "auth-provider")


def checked_kubeconfig(given: str, ctx: TargetContext, alias: str) -> str:
    """The real paths of the kubeconfig files ``given`` lists (``os.pathsep``-separated, as the
    client merges them), each confined and checked; TargetError naming the setting otherwise."""
    paths = []
    for part in (p for p in given.split(os.pathsep) if p):
        confined = confined_file(part, ctx, "kubeconfig", alias)
        data = read_bytes(confined, f"provider '{alias}': kubeconfig '{part}'")
        if data is not None:  # a missing file is reported by the caller
            _check_content(data, confined.path.parent, ctx, alias)
        paths.append(str(confined.path))
    return os.pathsep.join(paths)


def _check_content(data: bytes, folder: Path, ctx: TargetContext, alias: str) -> None:
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError:
        return  # the client refuses it, and reads nothing it names
    for field, value in _named(doc):
        if field in _COMMAND_KEYS:
            if not ctx.allow_scripts:
                raise TargetError(f"provider '{alias}': kubeconfig: a user's '{field}' runs a command: "
                                  f"set {SCRIPTS_SETTING}=true to allow it, or name the kubeconfig in KUBECONFIG")
            continue
        # Relative to the kubeconfig's folder, as the client takes them.
        named_path(os.path.join(folder, os.path.expanduser(value)), ctx, f"kubeconfig {field}", alias)


def _named(doc: Any) -> Iterator[tuple[str, Any]]:
    """(key, value) of every file and command key in the kubeconfig's clusters and users."""
    if not isinstance(doc, dict):
        return
    for section, (inner, keys) in _FILE_KEYS.items():
        entries = doc.get(section)
        for entry in entries if isinstance(entries, list) else ():
            body = entry.get(inner) if isinstance(entry, dict) else None
            if not isinstance(body, dict):
                continue
            for key in keys:
                value = body.get(key)
                if isinstance(value, str) and value:
                    yield key, value
            if section == "users":
                yield from ((key, body[key]) for key in _COMMAND_KEYS if body.get(key) is not None)
