"""Render the definition with its variables applied, redacting what must not be shown."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from secretsapi.service.definition.interpolation import Interpolator
from secretsapi.service.definition.marked_environ import MarkedEnviron
from secretsapi.service.definition.readable_environ import readable
from secretsapi.service.definition.var_files import deep_merge, load_var_files
from secretsapi.service.definition.yaml_loader import load_yaml, read_text
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound
from secretsapi.service.generators import STATIC_KINDS
from secretsapi.service.loading.field_checks import check_plain
from secretsapi.service.results import RenderResult
from secretsapi.service.state import var_file_guard
from secretsapi.service.targets.redaction import redacted_auth, redacted_config
from secretsapi.service.workspace import Workspace

REDACTED = "***"
# Environment values are swapped for this marker while rendering, so whatever they flow
# into (a variable, a path, a config value) can be found and redacted afterwards.
_MARK = "\x00env\x00"
_VAR_REF = re.compile(r"\bvar\.([A-Za-z_][A-Za-z0-9_]*)")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")


def render_definition(ws: Workspace, *, variables: Mapping[str, Any] | None = None) -> RenderResult:
    """The definition with ``var_files`` and ``variables`` merged and every expression
    applied (the sync's merge), static secret values and environment values redacted."""
    try:
        text = read_text(ws.definition_path, source=ws.definition_path.name, max_bytes=ws.max_definition_bytes)
    except FileNotFoundError:
        raise DefinitionNotFound(f"definition file not found: {ws.definition_path.name}") from None
    doc = load_yaml(text, source=ws.definition_path.name, max_bytes=ws.max_definition_bytes)
    if not isinstance(doc, Mapping):
        raise DefinitionInvalid(["definition must be a mapping"])
    ws.check_var_files_before_reading()
    lane_files, target_profile = _lane(ws)
    if lane_files:
        var_file_guard.check_var_files(ws.guarded_files(), lane_files)
    raw_variables = doc.get("variables")
    base: Mapping[str, Any] = raw_variables if isinstance(raw_variables, Mapping) else {}
    overlays = [*load_var_files(ws.definition_path.parent, (*lane_files, *ws.var_files)), dict(variables or {})]
    merged = deep_merge(base, *overlays)
    environ = MarkedEnviron(readable(ws.environ), _MARK)
    interpolator = Interpolator(merged, environ, ws.interpolation_limits)
    config = {key: interpolator.render(value, key) for key, value in doc.items() if key != "variables"}
    config = {"variables": interpolator.variables, **config}
    problems = list(interpolator.errors)
    for key, value in config.items():
        # What sync refuses (binary, sets, dates by explicit tag), render cannot show either.
        check_plain(value, str(key), problems)
    if problems:
        raise DefinitionInvalid(problems)
    if target_profile is not None:
        _apply_target_profile(config, target_profile)
    # The var files may have moved the targets: checked against where they now land.
    var_file_guard.check_var_files(ws.guarded_files(loaded=True), ws.var_files,
                                   paths=var_file_guard.rendered_paths(config),
                                   reads=var_file_guard.rendered_reads(config))
    # Before the redaction: rendering shares unchanged parts with ``doc``, which it edits.
    variables_used = sorted(name for name in _references(doc) if name in merged)
    _redact_statics(config)
    credentials = _redact_providers(config)
    return RenderResult(
        config=_redact_marked(config, credentials),
        variables_used=variables_used,
        environment_used=sorted(environ.used),
        var_files=[*lane_files, *ws.var_files],
    )


def _lane(ws: Workspace) -> tuple[tuple[str, ...], str | None]:
    """The selected environment's var files and target profile, as the sync applies them; a
    definition that does not load without var files has no lane to read (unless one is named)."""
    try:
        _, profile = ws.lane()
    except (DefinitionInvalid, DefinitionNotFound):
        if ws.environment is not None:
            raise
        return (), None
    return (profile.var_files, profile.target_profile) if profile is not None else ((), None)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _apply_target_profile(config: dict[str, Any], name: str) -> None:
    """Each secret's targets with ``target_profiles.<name>`` merged in (provider alias, then kind)."""
    profiles = config.get("target_profiles")
    profile = profiles.get(name) if isinstance(profiles, Mapping) else None
    secrets = config.get("secrets")
    if not isinstance(profile, Mapping) or not isinstance(secrets, list):
        return
    by_provider, by_kind = (_mapping(profile.get(key)) for key in ("provider_overrides", "target_overrides"))
    for secret in secrets:
        targets = secret.get("targets") if isinstance(secret, Mapping) else None
        for target in targets if isinstance(targets, list) else ():
            if not isinstance(target, dict):
                continue
            merged: Mapping[str, Any] = _mapping(target.get("config"))
            for override in (by_provider.get(str(target.get("provider"))), by_kind.get(str(target.get("kind")))):
                if isinstance(override, Mapping):
                    merged = deep_merge(merged, override)
            if merged:
                target["config"] = merged


def _references(value: Any) -> set[str]:
    """Names of variables and environment entries the strings in ``value`` refer to (iterative:
    a deeply nested definition costs no stack)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            found.update(_VAR_REF.findall(item), _ENV_REF.findall(item))
    return found


def _redact_statics(config: dict[str, Any]) -> None:
    """Static values are secrets written by hand into the definition: never returned."""
    # Shapes the sync refuses are rendered as they are: only what has a shape is looked into.
    secrets = config.get("secrets")
    generators = [s for s in secrets if isinstance(s, dict)] if isinstance(secrets, list) else []
    for template in _mapping(config.get("templates")).values():
        if isinstance(template, dict):
            for field in _mapping(template.get("fields")).values():
                if isinstance(field, dict) and isinstance(field.get("generator"), dict):
                    generators.append(field["generator"])
    for generator in generators:
        options = generator.get("config")
        if generator.get("kind") in STATIC_KINDS and isinstance(options, dict):
            for key in ("value", "default"):
                if key in options:
                    options[key] = REDACTED


def _redact_providers(config: dict[str, Any]) -> list[str]:
    """Providers shown as ``/providers`` shows them (catalogue's redaction); returns the
    credentials removed, which may also have flowed elsewhere (a variable they came from)."""
    providers = config.get("providers")
    if not isinstance(providers, Mapping):
        # Not a block the redaction understands (sync refuses it): none of it is shown.
        if providers is not None:
            config["providers"] = REDACTED
        return []
    credentials: list[str] = []
    shown: dict[Any, Any] = {}
    for alias, spec in providers.items():
        if not isinstance(spec, Mapping):
            shown[alias] = REDACTED if spec is not None else None
            continue
        redacted = dict(spec)
        if "config" in spec:
            redacted["config"] = redacted_config(spec["config"])
            credentials += _removed(spec["config"], redacted["config"])
        if "auth" in spec:
            redacted["auth"] = redacted_auth(spec["auth"])
            credentials += _removed(spec["auth"], redacted["auth"])
        shown[alias] = redacted
    config["providers"] = shown
    return [c for c in credentials if c and c != REDACTED]


def _removed(before: Any, after: Any) -> list[str]:
    """The strings of ``before`` that the redaction replaced in ``after``."""
    if before == after:
        return []
    if isinstance(before, Mapping):
        after_map = after if isinstance(after, Mapping) else {}
        return [s for k, v in before.items() for s in _removed(v, after_map.get(str(k)))]
    if isinstance(before, list):
        after_list = after if isinstance(after, list) else []
        return [s for i, v in enumerate(before) for s in _removed(v, after_list[i] if i < len(after_list) else None)]
    return [before] if isinstance(before, str) else [str(before)]


def _redact_marked(value: Any, hidden: Sequence[str] = ()) -> Any:
    """Environment values (marked) and ``hidden`` strings, wherever they flowed, redacted."""
    # Loops, not comprehensions: each comprehension is a stack frame, and nesting is deep.
    if isinstance(value, Mapping):
        shown = {}
        for key, item in value.items():
            shown[key] = _redact_marked(item, hidden)
        return shown
    if isinstance(value, list):
        items = []
        for item in value:
            items.append(_redact_marked(item, hidden))
        return items
    if isinstance(value, str) and (_MARK in value or any(h in value for h in hidden)):
        return REDACTED
    return value
