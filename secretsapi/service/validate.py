"""Validation: a submitted definition (POST /config/validate) or a definition file on disk."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from secretsapi.service.definition.checker import DefinitionChecker
from secretsapi.service.definition.var_files import load_var_files
from secretsapi.service.definition.yaml_loader import MAX_BYTES, load_yaml, read_text
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound
from secretsapi.service.results import ValidationReport

logger = logging.getLogger(__name__)


def validate_file(path: Path, *, max_bytes: int = MAX_BYTES, var_files: Sequence[str] = ()) -> ValidationReport:
    """The file as operations given these ``var_files`` would see it (a var file that is missing,
    outside the definition's folder or not a mapping raises, as it does for them)."""
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
    return validate_document(document, overlays=load_var_files(path.parent, var_files))


def validate_document(
    doc: Any, *, environ: Mapping[str, str] | None = None, overlays: Sequence[Mapping[str, Any]] = ()
) -> ValidationReport:
    """Check a submitted definition; every problem becomes a message, nothing is raised."""
    checker = DefinitionChecker(os.environ if environ is None else environ, strict=True)
    try:
        checker.check(doc, overlays)
    except Exception:  # a checker bug must not turn bad input into a 500
        logger.exception("definition check failed unexpectedly")
        checker.errors.append("definition could not be checked")
    return ValidationReport(valid=not checker.errors, errors=checker.errors, warnings=checker.warnings)
