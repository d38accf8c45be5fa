"""Validate a definition file on disk with the checks of POST /config/validate."""

from __future__ import annotations

from pathlib import Path

from .definition import ValidationReport, validate_document
from .errors import DefinitionInvalid, DefinitionNotFound
from .yamlsafe import load_yaml


def validate_file(path: Path) -> ValidationReport:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DefinitionNotFound(f"definition file not found: {path}") from None
    try:
        document = load_yaml(text, source=path.name)
    except DefinitionInvalid as exc:
        return ValidationReport(valid=False, errors=exc.errors, warnings=[])
    return validate_document(document, base_dir=path.parent)
