"""Validation: a submitted definition (POST /config/validate) or a definition file on disk."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from secretsapi.service.credentials.spec import check_connection, credential_spec, is_credential
from secretsapi.service.definition.budget import InterpolationLimits
from secretsapi.service.definition.marked_environ import MarkedEnviron
from secretsapi.service.definition.model import Definition, Environments, TargetSpec
from secretsapi.service.definition.readable_environ import readable
from secretsapi.service.definition.var_files import load_var_files
from secretsapi.service.definition.yaml_loader import MAX_BYTES, load_yaml, read_definition
from secretsapi.service.errors import DefinitionInvalid, TargetError
from secretsapi.service.loading.checker import DefinitionChecker
from secretsapi.service.results import ValidationReport
from secretsapi.service.targets.paths import outside_message, path_problem, refused_message, within_roots
from secretsapi.service.targets.providers import check_auth_kind, provider_in
from secretsapi.service.targets.registry import get_kind, provider_kind
from secretsapi.service.workspace import Workspace

logger = logging.getLogger(__name__)


# The config fields of the local kinds that name a file (checked against the target roots).
LOCAL_PATH_FIELDS = {"local/file": ("path",), "local/template": ("template_path", "output_path"),
                     "kubernetes/external_secret": ("output_path",)}
# The provider settings that name a file the store's client reads (remote.named_path); Vault's
# ``verify`` too when it is a path.
PROVIDER_PATH_SETTINGS = ("token_file", "kubeconfig", "config_file", "ca_cert", "certificate_authority", "verify")
# Never a file a definition names, whatever the roots (paths.named_file).
_SYSTEM_FOLDERS = ("/proc", "/sys", "/dev")


def validate_file(path: Path, *, max_bytes: int = MAX_BYTES, var_files: Sequence[str] = (),
                  target_roots: Sequence[Path] | None = None,
                  limits: InterpolationLimits | None = None,
                  environ: Mapping[str, str] | None = None) -> ValidationReport:
    """The file as operations given these ``var_files`` would see it (a var file that is missing,
    outside the definition's folder or not a mapping raises, as it does for them).
    ``target_roots`` None or empty: the definition's folder, as at sync. ``environ``: what the
    operations read (the operator's allow-list); None: the process's less the service's own."""
    try:
        text = read_definition(path, max_bytes)
    except DefinitionInvalid as exc:
        return ValidationReport(valid=False, errors=exc.errors, warnings=[])
    try:
        document = load_yaml(text, source=path.name, max_bytes=max_bytes)
    except DefinitionInvalid as exc:
        return ValidationReport(valid=False, errors=exc.errors, warnings=[])
    # The served files, validated as operations read them: against the environment they may read.
    return validate_document(document, environ=environ, overlays=load_var_files(path.parent, var_files),
                             base_dir=path.parent, target_roots=target_roots, limits=limits)


def validate_workspace(ws: Workspace) -> ValidationReport:
    """``validate_file`` for the workspace's definition and var files; a var file holding what the
    service guards is refused before it is read (var_file_guard)."""
    ws.check_var_files_before_reading()
    report = validate_file(ws.definition_path, max_bytes=ws.max_definition_bytes, var_files=ws.var_files,
                           target_roots=ws.target_roots, limits=ws.interpolation_limits, environ=ws.environ)
    if not report.valid:
        return report
    missing = unconfigured_connections(ws.definition())
    return replace(report, valid=False, errors=[*report.errors, *missing]) if missing else report


def with_connections_checked(report: ValidationReport, document: Any,
                             connections: Mapping[str, str]) -> ValidationReport:
    """``report`` of a sent definition, with each source-credential secret naming a connection not
    in ``connections`` as an error (SERVICE_ROTATION_CONNECTIONS)."""
    secrets = document.get("secrets") if isinstance(document, dict) else None
    problems = []
    for index, secret in enumerate(secrets if isinstance(secrets, list) else []):
        kind = secret.get("kind") if isinstance(secret, dict) else None
        config = secret.get("config") if isinstance(secret, dict) else None
        if not isinstance(kind, str) or not is_credential(kind) or not isinstance(config, Mapping):
            continue
        spec = credential_spec(kind, config, "", [])
        problem = check_connection(spec, connections) if spec is not None else None
        if problem is not None:
            problems.append(f"secrets[{index}].config.connection: {problem}")
    return replace(report, valid=False, errors=[*report.errors, *problems]) if problems else report


def unconfigured_connections(definition: Definition) -> list[str]:
    """A source-credential secret naming a connection the operator did not configure (or one of
    another kind), naming the setting: the workspace's own rule, so only a workspace checks it."""
    problems = []
    for index, secret in enumerate(definition.secrets):
        for unit in secret.units:
            if not is_credential(unit.generator.kind):
                continue
            spec = credential_spec(unit.generator.kind, unit.generator.config, "", [])
            problem = check_connection(spec, definition.egress.connections) if spec is not None else None
            if problem is not None:
                problems.append(f"secrets[{index}].config.connection: {problem}")
    return problems


def validate_document(
    doc: Any, *, environ: Mapping[str, str] | None = None, overlays: Sequence[Mapping[str, Any]] = (),
    base_dir: Path | None = None, target_roots: Sequence[Path] | None = None,
    limits: InterpolationLimits | None = None, marked: Mapping[str, str] | None = None,
) -> ValidationReport:
    """Check a definition; every problem becomes a message, nothing is raised.

    A submitted document has no folder (``base_dir`` None): absolute local paths are checked
    against ``target_roots`` when the setting gives some, relative ones only for their shape.
    ``environ`` None (submitted text): the marked environment, so the report cannot depend on
    any environment value; ``marked`` (submitted text too): the readable environment to mark,
    the operator's allow-list in the service, so a name it does not hold reads as unset.
    """
    seen = MarkedEnviron(readable(marked)) if environ is None else readable(environ)
    checker = DefinitionChecker(seen, strict=True, limits=limits)
    checker.target_rules = _TargetRules(checker, base_dir, tuple(target_roots or ()))
    try:
        parsed = checker.check(doc, overlays)
        checker.errors += _lockfile_errors(parsed.environments, base_dir, tuple(target_roots or ()))
    except Exception:  # a checker bug must not turn bad input into a 500
        logger.exception("definition check failed unexpectedly")
        checker.errors.append("definition could not be checked")
    return ValidationReport(valid=not checker.errors, errors=checker.errors, warnings=checker.warnings)


class _TargetRules:
    """Every target of a supported type, checked where it is defined (each secret's targets, each
    template field's and template's), whatever else is wrong with its secret: the kind's own
    ``validate`` against its declaration and its provider (errors: sync would refuse the target)
    and ``advise`` (warnings), its provider's required settings (errors), then the allowed target
    roots for local paths."""

    def __init__(self, checker: DefinitionChecker, base_dir: Path | None, roots: tuple[Path, ...]) -> None:
        self._checker = checker
        self._base_dir = base_dir
        # A submitted document has no folder: only absolute paths are placed, in the setting's roots.
        self._roots = roots or ((base_dir,) if base_dir is not None else ())
        self._providers_seen: set[str] = set()
        self._provider_files_seen: set[str] = set()

    def __call__(self, target: TargetSpec, named: str, place: str,
                 default_key: str | None) -> tuple[list[str], list[str]]:
        kind = get_kind(target.type)
        if default_key and not target.config.get("key"):
            # The kind judges the key it will store under (a tfvars file refuses 'db.password').
            target = replace(target, config={**target.config, "key": default_key})
        errors = kind.validate(target, named, self._checker.providers) + self._root_errors(target, named)
        errors += self._provider_file_errors(target, named)
        warnings = kind.advise(target, named)
        provider_errors, provider_warnings = self._provider_problems(target, named)
        errors += provider_errors
        warnings += provider_warnings
        hidden = [str(value) for key, value in target.config.items()
                  if value and self._checker.interpolated_at(f"{place}.config.{key}")]
        return _hide(errors, hidden), _hide(warnings, hidden)

    def _provider_problems(self, target: TargetSpec, named: str) -> tuple[list[str], list[str]]:
        """A declared provider's problems, once per provider at its first target: the settings its
        declaration requires (errors: every target using it fails at sync); an auth kind it has
        not, a timeout or max_concurrency out of range (warnings: SecretZero has other auth kinds
        and no max_concurrency; every target using it fails at sync)."""
        spec = self._checker.providers.get(target.provider)
        schema = provider_kind(spec.kind) if spec is not None else None
        if schema is None or target.provider in self._providers_seen:
            return [], []
        self._providers_seen.add(target.provider)
        provider = provider_in(target, self._checker.providers)
        errors = schema.problems(provider.settings, provider.auth_kind, f"{named}: provider '{target.provider}'")
        try:
            check_auth_kind(provider, schema)
            if schema.kind != "local" and schema.config.get("timeout") is not None:
                provider.timeout  # noqa: B018 - its check is the point
                provider.max_concurrency  # noqa: B018
        except TargetError as exc:
            return errors, [f"{named}: {exc}: the targets using it fail at sync"]
        return errors, []

    def _provider_file_errors(self, target: TargetSpec, named: str) -> list[str]:
        """Files a declared provider names outside the target roots (or in /proc, /sys, /dev),
        once per provider at its first target: every target using it fails at sync."""
        spec = self._checker.providers.get(target.provider)
        if spec is None or target.provider in self._provider_files_seen:
            return []
        self._provider_files_seen.add(target.provider)
        settings = provider_in(target, self._checker.providers).settings
        errors = []
        for key in PROVIDER_PATH_SETTINGS:
            value = settings.get(key)
            if isinstance(value, str) and value and not path_problem(value, key) and self._outside(value):
                errors.append(f"{named}: provider '{target.provider}': {key}: {refused_message(value)}")
        return errors

    def _outside(self, value: str) -> bool:
        """Lexically (validation does not depend on the disk): a path no root holds, or a
        pseudo-filesystem's; False for what cannot be placed (relative, with no folder)."""
        if self._base_dir is None and not os.path.isabs(value):
            return False
        full = os.path.normpath(os.path.join(os.path.abspath(self._base_dir or "/"), value))
        if any(full == folder or full.startswith(folder + os.sep) for folder in _SYSTEM_FOLDERS):
            return True
        return bool(self._roots) and not within_roots(full, self._roots)

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


def _lockfile_errors(environments: Environments, base_dir: Path | None, roots: tuple[Path, ...]) -> list[str]:
    """Profile lockfiles outside the target roots and the definition's folder, judged lexically
    as local target paths are (the operations also resolve links and refuse the service's own
    files); a submitted document has no folder, so only its absolute paths are placed."""
    allowed = (*roots, *((base_dir,) if base_dir is not None else ()))
    errors = []
    for name, profile in environments.profiles.items():
        given = profile.lockfile
        if not given or (base_dir is None and (not roots or not os.path.isabs(given))):
            continue
        full = os.path.normpath(os.path.join(os.path.abspath(base_dir or "/"), given))
        if not within_roots(full, allowed):
            errors.append(f"environments.profiles.{name}.lockfile: {refused_message(given)}")
    return errors


def _hide(messages: list[str], hidden: Sequence[str]) -> list[str]:
    """Quoted values that came out of a substitution (they may carry the process environment)
    replaced; the roots check still names the path bare, as before: the operator must see where
    it points."""
    for value in hidden:
        messages = [m.replace(repr(value), "the interpolated value") for m in messages]
    return messages
