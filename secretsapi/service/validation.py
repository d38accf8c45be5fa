"""Validate a definition file on disk with the checks of POST /config/validate."""

from __future__ import annotations

from pathlib import Path

from .definition import ValidationReport, validate_document
from .errors import DefinitionInvalid, DefinitionNotFound
from .yamlsafe import MAX_BYTES, load_yaml, read_text


def validate_file(path: Path, *, max_bytes: int = MAX_BYTES) -> ValidationReport:
    try:
        text = read_text(path, source=path.name, max_bytes=max_bytes)
    except FileNotFoundError:
        raise DefinitionNotFound(f"definition file not found: {path}") from None
    except DefinitionInvalid as exc:
        return ValidationReport(valid=False, errors=exc.errors, warnings=[])
    try:
        document = load_yaml(text, source=path.name, max_bytes=max_bytes)
    except DefinitionInvalid as exc:
        return ValidationReport(valid=False, errors=exc.errors, warnings=[])
    return validate_document(document, base_dir=path.parent)
