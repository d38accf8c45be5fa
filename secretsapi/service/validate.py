"""Validation: a submitted definition (POST /config/validate) or a definition file on disk."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from secretsapi.service.definition.checker import DefinitionChecker
from secretsapi.service.definition.model import SecretDef
from secretsapi.service.definition.var_files import load_var_files
from secretsapi.service.definition.yaml_loader import MAX_BYTES, load_yaml, read_text
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound
from secretsapi.service.results import ValidationReport
from secretsapi.service.targets.paths import outside_message, path_problem, within_roots

logger = logging.getLogger(__name__)


# The config fields of the local kinds that name a file (checked against the target roots).
LOCAL_PATH_FIELDS = {"local/file": ("path",), "local/template": ("template_path", "output_path")}


def validate_file(path: Path, *, max_bytes: int = MAX_BYTES, var_files: Sequence[str] = (),
                  target_roots: Sequence[Path] | None = None) -> ValidationReport:
    """The file as operations given these ``var_files`` would see it (a var file that is missing,
    outside the definition's folder or not a mapping raises, as it does for them).
    ``target_roots`` None or empty: the definition's folder, as at sync."""
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
    return validate_document(document, overlays=load_var_files(path.parent, var_files),
                             base_dir=path.parent, target_roots=target_roots)


def validate_document(
    doc: Any, *, environ: Mapping[str, str] | None = None, overlays: Sequence[Mapping[str, Any]] = (),
    base_dir: Path | None = None, target_roots: Sequence[Path] | None = None,
) -> ValidationReport:
    """Check a definition; every problem becomes a message, nothing is raised.

    A submitted document has no folder (``base_dir`` None): absolute local paths are checked
    against ``target_roots`` when the setting gives some, relative ones only for their shape.
    """
    checker = DefinitionChecker(os.environ if environ is None else environ, strict=True)
    try:
        parsed = checker.check(doc, overlays)
        checker.errors.extend(_root_errors(parsed.secrets, base_dir, tuple(target_roots or ())))
    except Exception:  # a checker bug must not turn bad input into a 500
        logger.exception("definition check failed unexpectedly")
        checker.errors.append("definition could not be checked")
    return ValidationReport(valid=not checker.errors, errors=checker.errors, warnings=checker.warnings)


def _root_errors(secrets: Sequence[SecretDef], base_dir: Path | None, roots: tuple[Path, ...]) -> list[str]:
    """Local target paths outside every allowed root, each naming the secret and the target."""
    if base_dir is not None:
        roots = roots or (base_dir,)
    errors: list[str] = []
    for secret in secrets:
        targets = [*secret.targets, *(p.target for unit in secret.units for p in unit.placements)]
        for target in targets:  # template fields place their targets; messages are deduplicated
            for name in LOCAL_PATH_FIELDS.get(target.type, ()):
                value = target.config.get(name)
                if path_problem(value, name) or not isinstance(value, str):
                    continue  # the kind's own check reports it
                if base_dir is None and (not roots or not os.path.isabs(value)):
                    continue  # no folder: a relative path cannot be placed
                full = os.path.normpath(os.path.join(os.path.abspath(base_dir or "/"), value))
                message = (f"secret '{secret.name}' target {target.type} config.{name}: "
                           f"{outside_message(value)}")
                if not within_roots(full, roots) and message not in errors:
                    errors.append(message)
    return errors
