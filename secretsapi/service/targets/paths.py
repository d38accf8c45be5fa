"""Confinement of local target paths to the allowed roots (SERVICE_TARGET_ROOTS, by default the
definition folder): relative paths are taken from the definition folder, absolute ones as written."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from secretsapi.service.errors import TargetError
from secretsapi.service.util import atomic_files

ROOTS_SETTING = "SERVICE_TARGET_ROOTS"


def path_problem(value: object, field: str) -> str | None:
    """The shape check usable without a folder (validation); roots and symlinks are checked at use."""
    if not isinstance(value, str) or not value.strip():
        return f"config.{field} is required and must be a non-empty string"
    if "\x00" in value:
        return f"config.{field} contains a NUL character"
    return None


def lexical_key(base_dir: Path, config: Mapping[str, Any], field: str) -> str:
    """The normalized absolute path without touching the disk: grouping must not raise."""
    base, path = os.fspath(base_dir), str(config.get(field, ""))
    if not os.path.isabs(base):  # relative to the working folder, which may change: not kept
        return os.path.normpath(os.path.join(os.path.abspath(base), path))
    return _lexical(base, path)


@functools.lru_cache(maxsize=65536)
def _lexical(base: str, path: str) -> str:
    """``lexical_key`` of an absolute folder: a write groups, locks and writes each of its
    targets by it, three times for each of a sync's 5,000 (bench/README.md); paths only."""
    return os.path.normpath(os.path.join(os.path.abspath(base), path))


def outside_message(path: str) -> str:
    """Names the path as written (never a value derived from elsewhere) and the setting."""
    return f"path {path} is outside the allowed target roots ({ROOTS_SETTING})"


def within_roots(path: str, roots: Sequence[Path]) -> bool:
    """Lexically (no disk access): ``path`` (absolute, normalized) lies strictly inside a root or is
    a file named by it. Used by validation, which must not depend on the disk."""
    for root in roots:
        base = os.path.normpath(os.path.abspath(root))
        if path != base and (path.startswith(base.rstrip(os.sep) + os.sep)):
            return True
    return False


@dataclass(frozen=True)
class Confined:
    """A target file's real path and the allowed root it lies in: reads and writes walk from
    the root down without following a symbolic link (``util.atomic_files``), so a folder
    swapped for a link after the check cannot take them outside."""

    root: Path
    path: Path

    @property
    def folders(self) -> tuple[str, ...]:
        return self.path.relative_to(self.root).parts[:-1]


def confined_path(base_dir: Path, config: Mapping[str, Any], field: str,
                  roots: Sequence[Path] | None = None, service_paths: Sequence[Path] = ()) -> Confined:
    """The real path of ``config[field]``, symlinks resolved, inside one of ``roots`` and never
    under ``service_paths`` (the service's data folder, its database) or a pseudo-filesystem.

    ``roots`` None or empty: the definition folder alone. Links are resolved here, so a link
    inside a root to a place inside a root keeps working; a path whose real location leaves
    every root is refused. Using the resolved path follows no link at all.
    """
    value = config.get(field)
    problem = path_problem(value, field)
    if problem or not isinstance(value, str):  # path_problem names every non-string
        raise TargetError(problem or f"{field} must be a string")
    try:
        allowed = [Path(root).resolve() for root in (roots or (base_dir,))]
        resolved = (Path(base_dir).resolve() / value).resolve()
    except OSError as exc:  # a link removed while it was being resolved
        raise TargetError(f"path {value} cannot be resolved ({exc.strerror})") from None
    except RuntimeError:  # Python 3.11's Path.resolve on a link loop
        raise TargetError(f"path {value} cannot be resolved (a loop of symbolic links)") from None
    for root in allowed:
        if resolved != root and resolved.is_relative_to(root):
            if any(resolved == p or resolved.is_relative_to(p) for p in _guarded(tuple(service_paths))):
                raise TargetError(refused_message(value))
            return Confined(root, resolved)
    raise TargetError(outside_message(value))


# Pseudo-filesystems hold the process's own state (its environment, its memory), whatever the roots.
_SYSTEM = (Path("/proc"), Path("/sys"), Path("/dev"))


def refused_message(path: str) -> str:
    """One message for every refusal of a file a definition names, so it tells nothing about
    what exists there."""
    return (f"path {path} is outside the allowed target roots ({ROOTS_SETTING}) or among the "
            "service's own files")


def named_file(base_dir: Path, value: str, roots: Sequence[Path], service_paths: Sequence[Path]) -> Confined:
    """A file a definition names for the service to read (a token file, a kubeconfig, a CA
    bundle), confined like a local target: its real path inside one of ``roots`` (the
    definition's folder when empty), never under ``service_paths`` (the data folder, the
    database) or a pseudo-filesystem. ``~`` is expanded, as SecretZero does."""
    try:
        return confined_path(base_dir, {"path": os.path.expanduser(value)}, "path", roots, service_paths)
    except (TargetError, OSError, RuntimeError):
        raise TargetError(refused_message(value)) from None


@functools.lru_cache(maxsize=8)
def _guarded(service_paths: tuple[Path, ...]) -> tuple[Path, ...]:
    # Resolved once per setting: a sync reads a token file once per Vault path it writes.
    return tuple(Path(p).resolve() for p in (*service_paths, *_SYSTEM))


def link_message(location: str) -> str:
    return (f"{location}: a folder on the way (or the file) became a symbolic link or is not a "
            "folder; nothing was written through it")


def read_bytes(target: Confined, location: str) -> bytes | None:
    """The file's bytes, None when it (or a folder on the way) does not exist; never through a link."""
    try:
        folder = atomic_files.open_folder(target.root, target.folders, create=False)
        try:
            return atomic_files.read_file(folder, target.path.name)
        finally:
            os.close(folder)
    except FileNotFoundError:
        return None
    except atomic_files.LinkRefused:
        raise TargetError(link_message(location)) from None
    except OSError as exc:
        raise TargetError(f"{location}: cannot be read ({exc.strerror})") from None


def write_text(target: Confined, text: str, location: str) -> None:
    """Replace the file atomically (0600 when new), folders created 0700, never through a link."""
    try:
        atomic_files.atomic_write_text(target.path, text, root=target.root)
    except atomic_files.LinkRefused:
        raise TargetError(link_message(location)) from None
    except OSError as exc:
        raise TargetError(f"{location}: cannot be written ({exc.strerror})") from None


def read_text(target: Confined, location: str) -> str | None:
    """The file's text, None when it does not exist."""
    data = read_bytes(target, location)
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TargetError(f"{location}: not UTF-8 text") from None


def read_hash(target: Confined, location: str) -> str | None:
    """sha256 of the file's bytes (equal to sha256_text of its UTF-8 text), None when missing."""
    data = read_bytes(target, location)
    return None if data is None else hashlib.sha256(data).hexdigest()
