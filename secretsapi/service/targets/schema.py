"""One declaration per kind: a target kind's config, and a provider kind's settings and auth kinds.

Everything said about a kind's settings comes from its declaration: ``describe()`` and the
discovery endpoints (``/targets``, ``/providers``), validation's errors (types, choices, the
settings a write needs, which may come from the provider), the JSON Schema of a config, and the
tables of docs/definitions.md (``targets.tables``). A kind adds only the rules no declaration can
say (``Kind.check``: GitHub's repository or organisation scopes, Infisical's folder paths).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from secretsapi.service.definition.model import ProviderSpec
from secretsapi.service.targets.paths import path_problem

# A setting's type: a JSON type, ``path`` (a non-empty string naming a file, checked with
# ``paths.path_problem``) or ``string|integer`` (a name or a positive number, GitLab's project).
TYPES = ("string", "boolean", "integer", "number", "array", "object", "path", "string|integer")


@dataclass(frozen=True)
class Setting:
    """One config key. ``items``: an array's item type, or an object's value type (``string``:
    labels and tags); None leaves the items to the kind's own check. ``strict`` False: a value of
    another type is read loosely, as SecretZero reads it (the kind's ``advise`` warns), not refused.
    ``aliases``: other names the key is accepted under (checked alike, not listed apart)."""

    type: str
    description: str
    default: Any = None
    required: bool = False
    choices: tuple[Any, ...] = ()
    items: str | None = None
    strict: bool = True
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"unknown setting type {self.type!r}")

    def option(self) -> dict[str, Any]:
        """What ``describe()`` and the discovery endpoints show of it."""
        shown = {"path": "string", "string|integer": "string"}.get(self.type, self.type)
        return {"type": shown, "default": self.default, "description": self.description}

    def json_schema(self) -> dict[str, Any]:
        found: dict[str, Any] = {"description": self.description}
        if not self.strict:  # read loosely: any value is taken (and warned about)
            return {**found, **({"default": self.default} if self.default is not None else {})}
        if self.type == "path":
            found.update(type="string", minLength=1)
        elif self.type == "string|integer":
            found["anyOf"] = [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 1}]
        else:
            found["type"] = self.type
            if self.type == "string" and self.required:
                found["minLength"] = 1
        if self.choices:
            found["enum"] = list(self.choices)
        if self.default is not None:
            found["default"] = self.default
        if self.type == "array" and self.items:
            found["items"] = {"type": self.items}
        if self.type == "object" and self.items:
            found["additionalProperties"] = {"type": self.items}
        return found

    def problems(self, config: Mapping[str, Any], key: str, where: str) -> list[str]:
        """This setting's errors in ``config``, each naming ``where`` and ``config.<key>``."""
        value = config.get(key)
        if not self.strict:
            return [f"{where}: config.{key} is required"] if self.required and value is None else []
        if self.type == "path":
            problem = path_problem(value, key)
            return [f"{where}: {problem}"] if problem and (self.required or value is not None) else []
        if value is None:
            return [f"{where}: config.{key} is required"] if self.required else []
        named = f"{where}: config.{key}"
        if self.type == "string|integer":
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return []
            return _text(value, named, self.required, ())
        if self.type == "string":
            return _text(value, named, self.required, self.choices)
        if self.type == "boolean":
            return [] if isinstance(value, bool) else [f"{named} must be true or false"]
        if self.type in ("integer", "number"):
            number = isinstance(value, int | float) if self.type == "number" else isinstance(value, int)
            if isinstance(value, bool) or not number or (self.choices and value not in self.choices):
                whole = "whole " if self.type == "integer" else ""
                wanted = " or ".join(str(c) for c in self.choices) or f"a {whole}number"
                return [f"{named} must be {wanted}"]
            return []
        if self.type == "array":
            if not isinstance(value, list) or (self.items == "string" and not all(isinstance(v, str) for v in value)):
                return [f"{named} must be a list" + (" of strings" if self.items == "string" else "")]
            return []
        if not isinstance(value, Mapping) or (self.items == "string" and not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
            return [f"{named} must be a mapping" + (" of strings to strings" if self.items == "string" else "")]
        return []


def _text(value: Any, named: str, required: bool, choices: tuple[Any, ...]) -> list[str]:
    if not isinstance(value, str) or (required and not value.strip()):
        return [f"{named} must be a non-empty string" if required else f"{named} must be a string"]
    if choices and value not in choices:
        return [f"{named} '{value}' is not one of {', '.join(choices)}"]
    return []


@dataclass(frozen=True)
class Need:
    """A write needs one of ``keys`` in the target's config, or else one of ``provider`` in its
    provider's settings (the target's own wins): Vercel's ``project_id``, Key Vault's vault."""

    keys: tuple[str, ...]
    provider: tuple[str, ...] = ()

    def problem(self, config: Mapping[str, Any], where: str, alias: str,
                provider: Mapping[str, Any] | None) -> str | None:
        if any(_given(config.get(key)) for key in self.keys):
            return None
        if provider is not None and any(_given(provider.get(key)) for key in self.provider):
            return None
        named = " or ".join(f"config.{key}" for key in self.keys)
        where_else = f", or {' or '.join(self.provider)} in provider '{alias}'" if self.provider else ""
        return f"{where}: {named} is required (in the target{where_else})"


def _given(value: Any) -> bool:
    return value is not None and value != ""


@dataclass(frozen=True)
class KindSchema:
    """A target kind: ``<provider kind>/<kind>``, what it does, its config keys and what a write
    needs beyond the required ones; ``target_id`` says which id the lockfile records (docs);
    ``example``: a smallest valid config (its provider's settings meeting no need)."""

    type: str
    description: str
    config: Mapping[str, Setting]
    needs: tuple[Need, ...] = ()
    target_id: str = ""
    example: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """``{"description", "config": {key: {"type", "default", "description"}}}``."""
        return {"description": self.description, "config": {k: s.option() for k, s in self.config.items()}}

    def problems(self, config: Mapping[str, Any], where: str, alias: str,
                 provider: Mapping[str, Any] | None) -> list[str]:
        """The config's errors by this declaration; ``provider`` None: the provider's settings are
        unknown here, so needs the provider may meet are not judged."""
        found = [p for key, setting in self.config.items() for name in (key, *setting.aliases)
                 for p in setting.problems(config, name, where) if name == key or name in config]
        for need in self.needs:
            judged = provider is not None or not need.provider
            problem = need.problem(config, where, alias, provider) if judged else None
            if problem:
                found.append(problem)
        return found

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema (2020-12) of a target's ``config``: keys it does not know are allowed,
        as SecretZero ignores them; needs a provider may meet are left to validation."""
        schema: dict[str, Any] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"{self.type} target config",
            "type": "object",
            "properties": {name: setting.json_schema() for key, setting in self.config.items()
                           for name in (key, *setting.aliases)},
        }
        required = [key for key, setting in self.config.items() if setting.required]
        if required:
            schema["required"] = required
        one_of = [need.keys for need in self.needs if not need.provider]
        if one_of:
            schema["allOf"] = [{"anyOf": [{"required": [key]} for key in keys]} for keys in one_of]
        return schema


@dataclass(frozen=True)
class AuthKind:
    """An ``auth.kind`` a provider kind accepts, and the settings it cannot do without."""

    name: str
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProviderSchema:
    """A provider kind: its store's name in messages (``title``), its settings (``config`` and
    ``auth.config``: a setting may sit in either), its auth kinds; ``addressed``: a definition may
    name the address its requests go to with the server's own credentials, which ``egress`` then
    rules; ``hosted``: the addresses of its public service, where they may go without the
    operator listing them. ``*`` in a host stands for one DNS label."""

    kind: str
    title: str
    description: str
    config: Mapping[str, Setting] = field(default_factory=dict)
    auth_kinds: tuple[AuthKind, ...] = ()
    auth_config: Mapping[str, Setting] = field(default_factory=dict)
    addressed: bool = False
    hosted: tuple[str, ...] = ()
    example: Mapping[str, Any] = field(default_factory=dict)  # a smallest valid ``config``

    @property
    def auth_kind_names(self) -> tuple[str, ...]:
        return tuple(auth.name for auth in self.auth_kinds)

    def problems(self, settings: Mapping[str, Any], auth_kind: str | None, where: str) -> list[str]:
        """What a write through this provider would trip on: its required settings, and those its
        auth kind requires (``settings``: config and auth.config merged, ``provider_settings``)."""
        found = [f"{where}: {key} is required" for key, setting in {**self.auth_config, **self.config}.items()
                 if setting.required and not _given(settings.get(key))]
        auth = next((a for a in self.auth_kinds if a.name == auth_kind), None)
        for key in auth.requires if auth is not None else ():
            if not _given(settings.get(key)):
                found.append(f"{where}: auth kind {auth_kind} needs {key}")
        return found

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of a ``providers:`` entry of this kind."""
        def block(settings: Mapping[str, Setting]) -> dict[str, Any]:
            return {"type": "object", "properties": {k: s.json_schema() for k, s in settings.items()}}

        auth = {"type": "object", "properties": {"kind": {"enum": list(self.auth_kind_names)},
                                                 "config": block(self.auth_config)}}
        return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": f"{self.kind} provider",
                "type": "object", "properties": {"kind": {"const": self.kind}, "config": block(self.config),
                                                 "auth": auth}}


def provider_settings(spec: ProviderSpec | None) -> dict[str, Any]:
    """A provider's settings: its auth block's ``config`` (and any other keys beside its ``kind``),
    overlaid by its ``config``. SecretZero keeps a region or a kubeconfig under ``auth.config``,
    other tools under ``config``; both work."""
    if spec is None:
        return {}
    auth = spec.auth if isinstance(spec.auth, Mapping) else {}
    auth_config = auth.get("config") if isinstance(auth.get("config"), Mapping) else {}
    settings = {k: v for k, v in auth.items() if k not in ("kind", "config")}
    settings.update(auth_config or {})
    settings.update(spec.config or {})
    return settings


def option_list(options: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``{name: option}`` as the discovery endpoints list it: ``[{name, type, default, description}]``."""
    return [{"name": name, **spec} for name, spec in options.items()]


def check_text(config: Mapping[str, Any], key: str, where: str, *, required: bool = False,
               choices: tuple[str, ...] = ()) -> list[str]:
    """A string setting's errors, for rules that depend on other settings (``Kind.check``)."""
    return Setting("string", "", required=required, choices=choices).problems(config, key, where)
