"""File formats for local/file targets: parse top-level keys, and rewrite keys in place."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from secretsapi.service.targets.formats import dotenv, json_, tfvars, toml_, yaml_
from secretsapi.service.targets.formats.errors import FormatError


@dataclass(frozen=True)
class FileFormat:
    name: str
    # Top-level key -> value of a whole file (FormatError when unparseable).
    load: Callable[[str], dict[str, Any]]
    # New text with ``updates`` set; ``text`` None or blank starts a new file. Keeps comments,
    # order and other keys where the format allows.
    render: Callable[[str | None, Mapping[str, str]], str]
    # SecretZero's own reading when it differs from the standard one (dotenv): a value written
    # so that only SecretZero reads it back is reported as misencoded, not as another value.
    load_secretzero: Callable[[str], dict[str, Any]] | None = None

    def rewrite(self, text: str | None, updates: Mapping[str, str]) -> str:
        """``render``, checked by reading the new text back: a writer bug must not record a hash
        the file does not hold."""
        rendered = self.render(text, updates)
        stored = self.load(rendered)
        for key, value in updates.items():
            if stored.get(key) != value:
                raise FormatError(f"the {self.name} writer cannot store '{key}' exactly")
        return rendered


def _build() -> dict[str, FileFormat]:
    return {
        "dotenv": FileFormat("dotenv", dotenv.load, dotenv.render, dotenv.load_secretzero),
        "json": FileFormat("json", json_.load, json_.render),
        "yaml": FileFormat("yaml", yaml_.load, yaml_.render),
        "toml": FileFormat("toml", toml_.load, toml_.render),
        "tfvars": FileFormat("tfvars", tfvars.load, tfvars.render),
    }


FORMATS: dict[str, FileFormat] = _build()

_EXTENSIONS = {".env": "dotenv", ".json": "json", ".yaml": "yaml", ".yml": "yaml",
               ".toml": "toml", ".tfvars": "tfvars"}


def infer_format(path: str) -> str:
    """The format named by the file's extension; ``.env`` and anything unknown -> dotenv."""
    lowered = path.lower()
    for extension, name in _EXTENSIONS.items():
        if lowered.endswith(extension):
            return name
    return "dotenv"
