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
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.paths import read_bytes
from secretsapi.service.targets.providers import confined_file, named_path

SCRIPTS_SETTING = "SERVICE_ALLOW_SCRIPTS"
# Per section of a kubeconfig: the key of each entry's body, and the body's keys naming a file.
_FILE_KEYS = {
    "clusters": ("cluster", ("certificate-authority",)),
    "users": ("user", ("client-certificate", "client-key", "tokenFile")),
}
# What makes the client run a command: a credential plugin, and the gcp/azure/oidc providers
# (``cmd-path``; oidc also names a CA file).
_COMMAND_KEYS = ("exec", "auth-provider")
_CACHE_SIZE = 32
# (given, folder, roots, service paths, allow_scripts, alias) -> (joined paths, paths, their stamps)
_checked: dict[tuple[Any, ...], tuple[str, tuple[str, ...], tuple[Any, ...]]] = {}
_lock = threading.Lock()


def checked_kubeconfig(given: str, ctx: TargetContext, alias: str) -> str:
    """The real paths of the kubeconfig files ``given`` lists (``os.pathsep``-separated, as the
    client merges them), each confined and checked; TargetError naming the setting otherwise.

    A sync asks once per Kubernetes Secret it writes: a result stays valid while the files it
    checked keep their stat (a stat each, instead of resolving and parsing them again).
    """
    key = (given, ctx.base_dir, ctx.target_roots, ctx.service_paths, ctx.allow_scripts, alias)
    with _lock:
        known = _checked.get(key)
    if known is not None and _stamps(known[1]) == known[2]:
        return known[0]
    paths: list[str] = []
    listed: list[str] = []
    for part in (p for p in given.split(os.pathsep) if p):
        confined = confined_file(part, ctx, "kubeconfig", alias)
        data = read_bytes(confined, f"provider '{alias}': kubeconfig '{part}'")
        if data is not None:  # a missing file is reported by the caller
            listed += _check_content(data, confined.path.parent, ctx, alias)
        paths.append(str(confined.path))
    joined = os.pathsep.join(paths)
    # Stamped after the check (through links: a file swapped for a link changes its stamp), so a
    # kubeconfig or a file it lists that changed since is checked again at the next use.
    watched = (*paths, *listed)
    with _lock:
        _checked[key] = (joined, watched, _stamps(watched))
        while len(_checked) > _CACHE_SIZE:
            _checked.pop(next(iter(_checked)))
    return joined


def _stamps(paths: Iterable[str]) -> tuple[Any, ...]:
    stamps: list[Any] = []
    for path in paths:
        try:
            st = os.stat(path)
            stamps.append((st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
        except OSError:
            stamps.append(None)
    return tuple(stamps)


def _check_content(data: bytes, folder: Path, ctx: TargetContext, alias: str) -> list[str]:
    """The paths of the files the kubeconfig lists, each checked; TargetError otherwise."""
    try:
        doc = yaml.safe_load(data)
    except (yaml.YAMLError, ValueError, RecursionError):
        return []  # the client refuses it, and reads nothing it names
    listed = []
    for field, value in _named(doc):
        if field in _COMMAND_KEYS:
            if not ctx.allow_scripts:
                raise TargetError(f"provider '{alias}': kubeconfig: a user's '{field}' runs a command: "
                                  f"set {SCRIPTS_SETTING}=true to allow it, or name the kubeconfig in KUBECONFIG")
            continue
        # Relative to the kubeconfig's folder, as the client takes them.
        path = os.path.join(folder, os.path.expanduser(value))
        named_path(path, ctx, f"kubeconfig {field}", alias)
        listed.append(path)
    return listed


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
