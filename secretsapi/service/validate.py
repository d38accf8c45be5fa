"""Validation: a submitted definition (POST /config/validate) or a definition file on disk."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from secretsapi.service.definition.checker import DefinitionChecker
from secretsapi.service.definition.model import TargetSpec
from secretsapi.service.definition.var_files import load_var_files
from secretsapi.service.definition.yaml_loader import MAX_BYTES, load_yaml, read_text
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound
from secretsapi.service.results import ValidationReport
from secretsapi.service.targets.paths import outside_message, path_problem, within_roots
from secretsapi.service.targets.registry import get_kind

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
    checker.target_rules = _TargetRules(checker, base_dir, tuple(target_roots or ()))
    try:
        checker.check(doc, overlays)
    except Exception:  # a checker bug must not turn bad input into a 500
        logger.exception("definition check failed unexpectedly")
        checker.errors.append("definition could not be checked")
    return ValidationReport(valid=not checker.errors, errors=checker.errors, warnings=checker.warnings)


class _TargetRules:
    """Every target of a supported type, checked where it is defined (each secret's targets, each
    template field's and template's), whatever else is wrong with its secret: the kind's own
    ``validate`` (errors: sync would refuse the target) and ``advise`` (warnings), then the
    allowed target roots for local paths."""

    def __init__(self, checker: DefinitionChecker, base_dir: Path | None, roots: tuple[Path, ...]) -> None:
        self._checker = checker
        self._base_dir = base_dir
        # A submitted document has no folder: only absolute paths are placed, in the setting's roots.
        self._roots = roots or ((base_dir,) if base_dir is not None else ())

    def __call__(self, target: TargetSpec, named: str, place: str) -> tuple[list[str], list[str]]:
        kind = get_kind(target.type)
        errors = kind.validate(target, named) + self._root_errors(target, named)
        advise = getattr(kind, "advise", None)
        warnings: list[str] = advise(target, named) if advise is not None else []
        hidden = [str(value) for key, value in target.config.items()
                  if value and self._checker.interpolated_at(f"{place}.config.{key}")]
        return _hide(errors, hidden), _hide(warnings, hidden)

    def _root_errors(self, target: TargetSpec, named: str) -> list[str]:
        errors = []
        for name in LOCAL_PATH_FIELDS.get(target.type, ()):
            value = target.config.get(name)
            if path_problem(value, name) or not isinstance(value, str):
                continue  # the kind's own check reports it
            if self._base_dir is None and (not self._roots or not os.path.isabs(value)):
                continue  # no folder: a relative path cannot be placed
            full = os.path.normpath(os.path.join(os.path.abspath(self._base_dir or "/"), value))
            if not within_roots(full, self._roots):
                errors.append(f"{named} config.{name}: {outside_message(value)}")
        return errors


def _hide(messages: list[str], hidden: Sequence[str]) -> list[str]:
    """Quoted values that came out of a substitution (they may carry the process environment)
    replaced; the roots check still names the path bare, as before: the operator must see where
    it points."""
    for value in hidden:
        messages = [m.replace(repr(value), "the interpolated value") for m in messages]
    return messages
