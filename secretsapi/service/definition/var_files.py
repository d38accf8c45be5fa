"""Variable files: finding and loading them inside the definition folder, and the deep merge that layers them."""

from __future__ import annotations

import errno
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from secretsapi.service.definition.yaml_loader import load_yaml, read_text
from secretsapi.service.errors import DefinitionInvalid, VarFileInvalid, VarFileNotFound


def deep_merge(base: Mapping[str, Any], *overlays: Mapping[str, Any]) -> dict[str, Any]:
    """Merge mappings recursively; later overlays win and a non-mapping replaces a mapping."""
    merged: dict[str, Any] = _copy(base)
    for overlay in overlays:
        for key, value in overlay.items():
            current = merged.get(key)
            if isinstance(current, Mapping) and isinstance(value, Mapping):
                merged[key] = deep_merge(current, value)
            else:
                merged[key] = _copy(value)
    return merged


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def resolve_var_file(base_dir: Path, given: str) -> Path:
    """The real path of a variable file; VarFileInvalid if it escapes ``base_dir``."""
    if not isinstance(given, str) or not given.strip():
        raise VarFileInvalid("variable file path must be a non-empty string")
    shown = given if len(given) <= 200 else given[:200] + "..."
    base = Path(base_dir).resolve()
    candidate = Path(given)
    try:
        # resolve() follows symlinks and ".." so the containment check sees the real target.
        real = (candidate if candidate.is_absolute() else base / candidate).resolve()
        if real != base and base not in real.parents:
            raise VarFileInvalid(f"variable file '{shown}' is outside the definition folder")
        if not real.exists():
            raise VarFileNotFound(f"variable file '{shown}' not found")
        if not real.is_file():
            raise VarFileInvalid(f"variable file '{shown}' is not a file")
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            # No file can have a name the filesystem refuses: as absent as any other missing file.
            raise VarFileNotFound(f"variable file '{shown}' not found (its name is longer than the "
                                  "filesystem allows)") from None
        # A loop of links, a folder that cannot be searched: bad input, not a 500.
        raise VarFileInvalid(f"variable file '{shown}' is not a usable path") from None
    except ValueError:
        # A NUL byte (the API refuses it before this; the CLI does not).
        raise VarFileInvalid(f"variable file '{shown}' is not a usable path") from None
    return real


def load_var_files(base_dir: Path, var_files: Sequence[str]) -> list[dict[str, Any]]:
    """Load each variable file (a YAML mapping) in order; messages name the path, never content."""
    loaded: list[dict[str, Any]] = []
    for given in var_files:
        real = resolve_var_file(base_dir, given)
        source = f"variable file '{given}'"
        try:
            text = read_text(real, source=source)
        except OSError:
            raise VarFileInvalid(f"{source} cannot be read as UTF-8 text") from None
        except DefinitionInvalid as exc:
            raise VarFileInvalid(exc.message) from None
        try:
            data = load_yaml(text, source=source)
        except DefinitionInvalid as exc:
            raise VarFileInvalid(exc.message) from None
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise VarFileInvalid(f"variable file '{given}' is not a YAML mapping")
        if is_definition(data):
            # Its static values would become variables, which render returns and sync writes.
            raise VarFileInvalid(f"variable file '{given}' is a definition (it declares secrets): a variable file "
                                 "holds variables, never another definition")
        loaded.append(dict(data))
    return loaded


def is_definition(data: Mapping[str, Any]) -> bool:
    """A definition's shape: a ``secrets`` list holding an entry with a ``kind`` or ``targets``."""
    secrets = data.get("secrets")
    return isinstance(secrets, list) and any(
        isinstance(item, Mapping) and ("kind" in item or "targets" in item) for item in secrets)
