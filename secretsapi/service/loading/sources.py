"""SecretZero's ``source:`` block and its environment override, checked into a ``SourceSpec``.

``source: {kind, required, config}`` imports a secret's value instead of generating it; the
config keys are SecretZero's (``env``: name, trim; ``file``: path, format, key, encoding;
``secret_ref``: secret, field; ``provider_read``: provider, kind, read, field). Without a
``source``, a non-empty environment variable named after the secret in upper case supplies its
value, whatever its kind (SecretZero's non-interactive rule).

Both read the environment they are given, which in the service is the operator's allow-list
(``definition.readable_environ``): a name it does not hold, the service's own settings among
them, is unset here, with the same messages and defaults as any unset variable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from secretsapi.service.definition.model import GeneratorSpec, SourceSpec

SOURCE_KEY = "source"
SOURCE_KINDS = ("env", "file", "secret_ref", "provider_read")
# What each kind requires (non-empty strings) and what else it may have, with the type.
_REQUIRED = {"env": ("name",), "file": ("path",), "secret_ref": ("secret",), "provider_read": ("provider", "kind")}
_OPTIONAL: dict[str, dict[str, type]] = {
    "env": {"trim": bool},
    "file": {"format": str, "key": str, "encoding": str},
    "secret_ref": {"field": str},
    "provider_read": {"field": str, "profile": str, "method": str},
}


def importable(environ: Mapping[str, str], name: str) -> str | None:
    """The variable's value, unless it is unset (or not readable) or empty."""
    return environ.get(name) or None


def sourced(generator: GeneratorSpec | None, raw: Mapping[str, Any], where: str, env_name: str,
            environ: Mapping[str, str], errors: list[str], warnings: list[str]) -> GeneratorSpec | None:
    """A secret's generator with its ``source:`` or, without one, SecretZero's environment
    override (``env_name``: the secret's name in upper case)."""
    if generator is None:
        return generator
    if SOURCE_KEY in raw:
        source = parse_source(raw[SOURCE_KEY], f"{where}.{SOURCE_KEY}", environ, errors)
        return replace(generator, source=source) if source is not None else None
    return with_override(generator, env_name, environ, warnings, where)


def source_canon(generator: GeneratorSpec | None, raw: Mapping[str, Any]) -> dict[str, Any]:
    """What the definition hash covers of the source: another source is another definition."""
    if generator is None or generator.source is None or generator.source.override:
        return {}
    return {SOURCE_KEY: raw[SOURCE_KEY]}


def parse_source(raw: Any, where: str, environ: Mapping[str, str], errors: list[str]) -> SourceSpec | None:
    """``raw`` (a secret's ``source``) checked; problems are added to ``errors``."""
    if not isinstance(raw, Mapping):
        errors.append(f"{where}: must be a mapping with kind and config")
        return None
    for key in raw:
        if key not in ("kind", "required", "config"):
            errors.append(f"{where}: unknown key '{key}'")
    kind = raw.get("kind")
    if kind not in SOURCE_KINDS:
        errors.append(f"{where}.kind: must be one of {', '.join(SOURCE_KINDS)}")
        return None
    required = raw.get("required", True)
    if not isinstance(required, bool):
        errors.append(f"{where}.required: must be a boolean")
        return None
    config = raw.get("config") or {}
    if not isinstance(config, Mapping):
        errors.append(f"{where}.config: must be a mapping")
        return None
    before = len(errors)
    for key in _REQUIRED[kind]:
        if not isinstance(config.get(key), str) or not config[key].strip():
            errors.append(f"{where}.config.{key}: must be a non-empty string")
    for key, type_ in _OPTIONAL[kind].items():
        if key in config and not isinstance(config[key], type_):
            errors.append(f"{where}.config.{key}: must be a {'boolean' if type_ is bool else 'string'}")
    if kind == "provider_read" and not _locates(config.get("read")):
        errors.append(f"{where}.config.read: must be a mapping with a name or a path")
    if len(errors) > before:
        return None
    spec = SourceSpec(kind=kind, config=dict(config), required=required)
    if kind == "env":
        name = config["name"]
        value = environ.get(name)
        problem = None if value is not None else f"env source variable not set: {name}"
        return replace(spec, env_value=value, problem=problem)
    return spec


def _locates(read: Any) -> bool:
    return isinstance(read, Mapping) and any(isinstance(read.get(k), str) and read[k] for k in ("name", "path"))


def with_override(generator: GeneratorSpec, env_name: str, environ: Mapping[str, str],
                  warnings: list[str], where: str) -> GeneratorSpec:
    """SecretZero's environment override: ``env_name`` set (non-empty) supplies the value of a
    secret of any generator kind it can run."""
    if generator.unavailable is not None or generator.source is not None:
        return generator
    value = environ.get(env_name)
    if not value:
        return generator
    return replace(generator, source=SourceSpec("env", {"name": env_name}, env_value=value, override=True))
