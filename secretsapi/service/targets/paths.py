"""Confinement of target paths to the definition folder (local targets never write outside it)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from secretsapi.service.errors import TargetError


def path_problem(value: object, field: str) -> str | None:
    """A lexical check usable without a folder (validation); symlinks are checked at use."""
    if not isinstance(value, str) or not value.strip():
        return f"config.{field} is required and must be a non-empty string"
    if "\x00" in value:
        return f"config.{field} contains a NUL character"
    if os.path.isabs(value):
        return f"config.{field} '{value}' must be relative to the definition folder"
    normal = os.path.normpath(value)
    if normal == "." or normal == ".." or normal.startswith(".." + os.sep):
        return f"config.{field} '{value}' escapes the definition folder"
    return None


def lexical_key(base_dir: Path, config: Mapping[str, Any], field: str) -> str:
    """The normalized absolute path without touching the disk: grouping must not raise."""
    return os.path.normpath(os.path.join(os.path.abspath(base_dir), str(config.get(field, ""))))


def confined_path(base_dir: Path, config: Mapping[str, Any], field: str) -> Path:
    """The real path of ``config[field]`` inside ``base_dir``, symlinks resolved.

    Writing to the resolved path keeps a symlink inside the folder a symlink.
    """
    value = config.get(field)
    problem = path_problem(value, field)
    if problem or not isinstance(value, str):  # path_problem names every non-string
        raise TargetError(problem or f"{field} must be a string")
    base = Path(base_dir).resolve()
    resolved = (base / value).resolve()
    if resolved == base or not resolved.is_relative_to(base):
        raise TargetError(f"config.{field} '{value}' escapes the definition folder")
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
