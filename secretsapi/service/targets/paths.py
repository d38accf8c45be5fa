"""Confinement of local target paths to the allowed roots (SERVICE_TARGET_ROOTS, by default the
definition folder): relative paths are taken from the definition folder, absolute ones as written."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from secretsapi.service.errors import TargetError

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
    return os.path.normpath(os.path.join(os.path.abspath(base_dir), str(config.get(field, ""))))


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


def confined_path(base_dir: Path, config: Mapping[str, Any], field: str,
                  roots: Sequence[Path] | None = None) -> Path:
    """The real path of ``config[field]``, symlinks resolved, inside one of ``roots``.

    ``roots`` None or empty: the definition folder alone. Writing to the resolved path keeps a
    symlink inside a root a symlink; a path whose real location leaves every root is refused.
    """
    value = config.get(field)
    problem = path_problem(value, field)
    if problem or not isinstance(value, str):  # path_problem names every non-string
        raise TargetError(problem or f"{field} must be a string")
    allowed = [Path(root).resolve() for root in (roots or (base_dir,))]
    resolved = (Path(base_dir).resolve() / value).resolve()
    if not any(resolved != root and resolved.is_relative_to(root) for root in allowed):
        raise TargetError(outside_message(value))
    return resolved


def read_text(path: Path, location: str) -> str | None:
    """The file's text, None when it does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TargetError(f"{location}: cannot be read ({exc.strerror})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TargetError(f"{location}: not UTF-8 text") from None


def read_hash(path: Path, location: str) -> str | None:
    """sha256 of the file's bytes (equal to sha256_text of its UTF-8 text), None when missing."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TargetError(f"{location}: cannot be read ({exc.strerror})") from None
