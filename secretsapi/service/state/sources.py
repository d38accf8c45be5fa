"""Import a secret's value from its ``source`` (SecretZero's ``_resolve_secret_source``).

A value is read, never generated: from the environment (taken when the definition was loaded),
a file (confined like a local target: inside the target roots, never the service's own files),
another secret's current value (``secret_ref``), or a store this service reads
(``provider_read``, through the target kind that writes there; with the server's own credentials
only under a location the operator lists in SERVICE_PROVIDER_READ, ``definition.egress``). It is
normalised and hashed as SecretZero does (``static_text``). Failures are ``SourceError``s naming
the source, never the value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from secretsapi.service.definition.model import Definition, Placement, SourceSpec, TargetSpec
from secretsapi.service.definition.yaml_loader import load_yaml
from secretsapi.service.errors import DefinitionInvalid, TargetError
from secretsapi.service.generators import static_text
from secretsapi.service.targets import TargetContext, get_kind
from secretsapi.service.targets.base import check_value_source
from secretsapi.service.targets.paths import named_file, read_bytes

# SecretZero's format from the file name when ``format`` is not given.
_SUFFIXES = {".json": "json", ".yml": "yaml", ".yaml": "yaml", ".env": "dotenv", ".txt": "text"}


class SourceError(Exception):
    """A source that cannot be read; ``message`` never holds a value."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def read_source(source: SourceSpec, secret_name: str, definition: Definition, ctx: TargetContext) -> str:
    """The value ``source`` holds, as SecretZero writes and hashes it."""
    if source.problem is not None:
        raise SourceError(source.problem)
    config = source.config
    if source.kind == "env":
        value: Any = source.env_value or ""
        if config.get("trim", True):
            value = value.strip()
    elif source.kind == "file":
        value = _from_file(config, definition)
    elif source.kind == "secret_ref":
        value = _from_secret(config, secret_name, ctx)
    elif source.kind == "provider_read":
        value = _from_store(config, secret_name, definition, ctx)
    else:  # the loader admits only the four kinds
        raise SourceError(f"unsupported source kind: {source.kind}")
    return static_text(value)


def _from_file(config: Mapping[str, Any], definition: Definition) -> Any:
    given = str(config["path"])
    try:
        confined = named_file(definition.base_dir, given, definition.target_roots, definition.service_paths)
        data = read_bytes(confined, f"file source {given}")
    except TargetError as exc:
        raise SourceError(f"file source: {exc.message}") from None
    if data is None:
        raise SourceError(f"file source path does not exist: {given}")
    try:
        text = data.decode(str(config.get("encoding", "utf-8")))
    except (LookupError, UnicodeDecodeError):
        raise SourceError(f"file source {given}: cannot be decoded as {config.get('encoding', 'utf-8')}") from None
    fmt = str(config.get("format", "")).strip().lower() or _format_of(given)
    parsed: Any
    if fmt == "json":
        try:
            parsed = json.loads(text) if text.strip() else {}
        except ValueError:
            raise SourceError(f"file source {given}: not valid JSON") from None
    elif fmt == "yaml":
        try:
            parsed = load_yaml(text, source=f"file source {given}") if text.strip() else {}
        except DefinitionInvalid:
            raise SourceError(f"file source {given}: not valid YAML") from None
        parsed = {} if parsed is None else parsed
    elif fmt == "dotenv":
        parsed = _dotenv(text)
    elif fmt == "text":
        parsed = text
    else:
        raise SourceError(f"Unsupported file source format: {fmt} (this service reads json, yaml, dotenv and text)")
    return _field(parsed, config.get("key"))


def _format_of(path: str) -> str:
    lower = path.lower()
    if lower.endswith(".tfvars.json"):
        return "json"
    if lower.endswith(".tfvars"):
        return "tfvars"
    dot = lower.rfind(".")
    return _SUFFIXES.get(lower[dot:], "text") if dot > lower.rfind("/") else "text"


def _dotenv(text: str) -> dict[str, str]:
    """SecretZero's dotenv reading for sources: ``KEY=value`` lines, quotes stripped."""
    data: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        data[key.strip()] = value.strip().strip('"').strip("'")
    return data


def _field(value: Any, path: Any) -> Any:
    """``path`` (dotted) inside ``value``; the whole value without one."""
    if not path:
        return value
    current = value
    for segment in str(path).split("."):
        key = segment.strip()
        if not key:
            raise SourceError("Field path contains an empty segment")
        if not isinstance(current, Mapping) or key not in current:
            raise SourceError(f"Field path '{path}' not found in source payload")
        current = current[key]
    return current


def _from_secret(config: Mapping[str, Any], secret_name: str, ctx: TargetContext) -> Any:
    other = str(config["secret"])
    if other == secret_name:
        raise SourceError("secret_ref source cannot reference itself")
    try:
        value = ctx.value_of(other)
    except TargetError as exc:
        raise SourceError(f"secret_ref source '{other}' is unavailable: {exc.message}") from None
    if value is None:
        raise SourceError(f"secret_ref source '{other}' is unavailable: it has no value this sync "
                          "generated or a target holds")
    if not config.get("field"):
        return value
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = value
    return _field(parsed, config["field"])


def _from_store(config: Mapping[str, Any], secret_name: str, definition: Definition, ctx: TargetContext) -> Any:
    alias = str(config["provider"])
    provider = definition.providers.get(alias)
    read: Mapping[str, Any] = config["read"]
    spec = TargetSpec(alias, str(config["kind"]), dict(read),
                      provider_kind=provider.kind if provider is not None and provider.kind != alias else None)
    placement = Placement(spec, str(read.get("key") or secret_name))
    where = f"provider_read source {alias}/{config['kind']}"
    try:
        kind = get_kind(spec.type)
        # The operator's store read with the operator's credentials: only where the operator said.
        check_value_source(kind, spec, ctx)
        back = kind.read([placement], ctx)[placement.key]
    except TargetError as exc:
        raise SourceError(f"{where}: {exc.message}") from None
    if not back.present or back.value is None:
        raise SourceError(f"{where}: nothing to read at {back.location}")
    if not config.get("field"):
        return back.value
    try:
        parsed = json.loads(back.value)
    except ValueError:
        parsed = back.value
    return _field(parsed, config["field"])
