"""Value generators (random_password, random_string, random_hex, uuid, static, azure_app_reg,
script) and the provider-backed ones that create tokens at their source (``tokens``)."""

from __future__ import annotations

import functools
import json
import re
import secrets
import string
import uuid
from collections.abc import Container, Mapping
from pathlib import Path
from typing import Any

from secretsapi.service.definition.model import GeneratorSpec
from secretsapi.service.errors import GeneratorError

# The token kinds register themselves with ``tokens`` (they import it; it imports none of them).
from secretsapi.service.generators import (  # noqa: F401
    azdo_pat,
    github_app_token,
    gitlab_service_accounts,
    gitlab_tokens,
)
from secretsapi.service.generators.random_draws import Draw, password
from secretsapi.service.generators.script_runner import run_script
from secretsapi.service.generators.tokens import issuer_of, token_kinds

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_LENGTH = 65_536  # a bound so a typo cannot make the server build a gigabyte string

CHARSETS: dict[str, str] = {
    "alphanumeric": string.ascii_letters + string.digits,
    "alpha": string.ascii_letters,
    "numeric": string.digits,
    "hex": "0123456789abcdef",
    "base64": string.ascii_letters + string.digits + "+/",
    "base64url": string.ascii_letters + string.digits + "-_",
}

PASSWORD_CLASSES: dict[str, str] = {
    "upper": string.ascii_uppercase,
    "lower": string.ascii_lowercase,
    "number": string.digits,
    "special": string.punctuation,
}


# SecretZero's generator kinds this service does not run: a definition using them is valid,
# and those secrets fail at sync (named in the validation warnings).
SECRETZERO_ONLY_GENERATORS = ("entra-agent-blueprint", "provider_backed")
# SecretZero's azure_app_reg is its static generator under another name (Entra app registration
# credentials typed in by hand); it makes no remote call.
STATIC_KINDS = ("static", "azure_app_reg")
DEFAULT_CHARSET = "alphanumeric"
STATIC_MISMATCH = "does not match the validation pattern"  # never the value: it is a secret


def _opt(type_: str, default: Any, description: str) -> dict[str, Any]:
    return {"type": type_, "default": default, "description": description}


GENERATORS: dict[str, dict[str, Any]] = {
    "random_password": {
        "description": "Random password with at least one character of every enabled class.",
        "options": {
            "length": _opt("integer", 32, "Number of characters."),
            "upper": _opt("boolean", True, "Include uppercase letters A-Z."),
            "lower": _opt("boolean", True, "Include lowercase letters a-z."),
            "number": _opt("boolean", True, "Include digits 0-9."),
            "special": _opt("boolean", True, "Include the 32 ASCII punctuation characters."),
            "exclude_characters": _opt("string", "", "Characters never to use."),
        },
    },
    "random_string": {
        "description": "Random string drawn from one character set.",
        "options": {
            "length": _opt("integer", 32, "Number of characters."),
            "charset": _opt(
                "string", DEFAULT_CHARSET,
                "One of: " + ", ".join(CHARSETS) + " (any other text means alphanumeric, as in SecretZero).",
            ),
        },
    },
    "random_hex": {
        "description": "Random lowercase hexadecimal string.",
        "options": {"length": _opt("integer", 32, "Number of hex characters.")},
    },
    "uuid": {"description": "Random UUID (version 4).", "options": {}},
    "static": {
        "description": "A fixed value from the definition (the server never prompts for one).",
        "options": {
            "value": _opt(
                "string", None,
                "The value: text, a number, a boolean or a mapping (written as SecretZero writes it: "
                "True, 1.5, compact JSON). Unset: the environment variable named like the secret in "
                "upper case, else the secret fails at sync.",
            ),
            "default": _opt("string", None, "Alternative name for 'value' (wins when both are given)."),
            "validation": _opt("string", None, "Regular expression a text value must match from its start."),
        },
    },
    "azure_app_reg": {
        "description": "An Entra (Azure AD) app registration credential (tenant id, client id, "
                       "client secret) given in the definition: the static generator under "
                       "SecretZero's name for it; no call to Azure.",
        "options": {},  # static's, filled in below
    },
    "script": {
        "description": "Output of a command (stdout, stripped); disabled unless allowed by configuration.",
        "options": {
            "command": _opt("string", None, "Program to run (split like a shell unless 'shell' is true)."),
            "args": _opt("array", [], "Extra arguments."),
            "shell": _opt("boolean", False, "Run the command through /bin/sh."),
            "timeout": _opt("number", 30, "Seconds before the command and everything it started are killed."),
            "env": _opt(
                "object", {}, "Environment variables for the command (names to text), beside PATH, HOME, "
                "LANG and LC_ALL: nothing else of the server's environment reaches a script.",
            ),
        },
    },
}


GENERATORS["azure_app_reg"]["options"] = GENERATORS["static"]["options"]
for _kind in token_kinds():
    _issuer = issuer_of(_kind)
    if _issuer is not None:
        GENERATORS[_kind] = {"description": _issuer.description, "options": _issuer.options}


def _int_option(config: Mapping[str, Any], name: str, default: int, where: str, errors: list[str]) -> int:
    value = config.get(name, default)
    # Digit strings are accepted because ``${LEN:-24}`` from the environment yields text.
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        errors.append(f"{where}.config.{name}: must be an integer")
        return default
    if value <= 0:
        errors.append(f"{where}.config.{name}: must be greater than zero")
    elif value > MAX_LENGTH:
        errors.append(f"{where}.config.{name}: must be at most {MAX_LENGTH}")
    return value


def _bool_option(config: Mapping[str, Any], name: str, default: bool, where: str, errors: list[str]) -> bool:
    value = config.get(name, default)
    if not isinstance(value, bool):
        errors.append(f"{where}.config.{name}: must be true or false")
        return default
    return value


def _str_option(config: Mapping[str, Any], name: str, where: str, errors: list[str]) -> str | None:
    value = config.get(name)
    if value is not None and not isinstance(value, str):
        errors.append(f"{where}.config.{name}: must be a string")
        return None
    return value


def _password_pools(config: Mapping[str, Any], where: str, errors: list[str]) -> tuple[int, tuple[str, ...]]:
    length = _int_option(config, "length", 32, where, errors)
    excluded = _str_option(config, "exclude_characters", where, errors) or ""
    enabled = tuple(name for name in PASSWORD_CLASSES if _bool_option(config, name, True, where, errors))
    pools = _pools(enabled, excluded)
    for name, pool in zip(enabled, pools, strict=True):
        if not pool:
            errors.append(f"{where}.config.exclude_characters: excludes every '{name}' character")
    if not pools:
        errors.append(f"{where}.config: every character class is disabled")
    elif length > 0 and length < len(pools):
        errors.append(
            f"{where}.config.length: {length} is shorter than the {len(pools)} enabled character classes"
        )
    return length, pools


@functools.lru_cache(maxsize=256)
def _pools(enabled: tuple[str, ...], excluded: str) -> tuple[str, ...]:
    """The enabled classes less the excluded characters: thousands of secrets share a few."""
    return tuple("".join(c for c in PASSWORD_CLASSES[name] if c not in excluded) for name in enabled)


def static_value(config: Mapping[str, Any]) -> Any:
    """SecretZero's choice: ``default`` when present (even empty), else ``value``."""
    return config["default"] if "default" in config else config.get("value")


def static_text(value: Any) -> str:
    """A static value as SecretZero writes and hashes it (its _normalize_secret_value): text as
    it is, mappings and lists as compact JSON with sorted keys, anything else through str()
    (``true`` becomes ``True``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _validate_static(config: Mapping[str, Any], where: str, errors: list[str]) -> None:
    value = static_value(config)
    if value is None:
        errors.append(f"{where}.config.value: static generator needs a value (or default)")
    pattern = _str_option(config, "validation", where, errors)
    if pattern is None:
        return
    try:
        compiled = re.compile(pattern)
    except re.error:
        errors.append(f"{where}.config.validation: not a valid regular expression")
        return
    # SecretZero checks text values only, with re.match (anchored at the start only).
    if isinstance(value, str) and value and compiled.match(value) is None:
        # Never the value itself: it is a secret.
        errors.append(f"{where}.config.value: {STATIC_MISMATCH}")


def _validate_script(config: Mapping[str, Any], where: str, errors: list[str]) -> None:
    command = config.get("command")
    if isinstance(command, list):
        if not command or not all(isinstance(part, str) for part in command):
            errors.append(f"{where}.config.command: must be a non-empty list of strings")
    elif not isinstance(command, str) or not command.strip():
        errors.append(f"{where}.config.command: script generator needs a command")
    args = config.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        errors.append(f"{where}.config.args: must be a list of strings")
    _bool_option(config, "shell", False, where, errors)
    timeout = config.get("timeout", 30)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        errors.append(f"{where}.config.timeout: must be a positive number of seconds")
    env = config.get("env", {})
    # Names only in messages: a declared value may be a credential passed on to the script.
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and _ENV_NAME.fullmatch(k) and isinstance(v, str | int | float)
        for k, v in env.items()
    ):
        errors.append(f"{where}.config.env: must map variable names to text")


def validate_generator(
    spec: GeneratorSpec, where: str, *, interpolated: Container[str] = frozenset()
) -> list[str]:
    """Static problems with a generator's kind and options, each naming the place.

    Values at places listed in ``interpolated`` are not echoed: they may come from the
    process environment.
    """
    errors: list[str] = []
    config = spec.config
    if spec.kind not in GENERATORS:
        expected = ", ".join(GENERATORS)
        shown = _shown(spec.kind, f"{where}.kind", interpolated)
        return [f"{where}.kind: unknown generator kind {shown} (expected one of {expected})"]
    if not isinstance(config, Mapping):
        return [f"{where}.config: must be a mapping"]
    if spec.kind == "random_password":
        _password_pools(config, where, errors)
    elif spec.kind == "random_string":
        _int_option(config, "length", 32, where, errors)
        charset = config.get("charset", DEFAULT_CHARSET)
        if not isinstance(charset, str):
            shown = _shown(charset, f"{where}.config.charset", interpolated)
            errors.append(f"{where}.config.charset: must be a string, got a value {shown}")
    elif spec.kind == "random_hex":
        _int_option(config, "length", 32, where, errors)
    elif spec.kind in STATIC_KINDS:
        _validate_static(config, where, errors)
    elif spec.kind == "script":
        _validate_script(config, where, errors)
    elif (issuer := issuer_of(spec.kind)) is not None:
        issuer.validate(config, where, errors)
    return errors


def charset_of(name: str) -> str:
    """The characters of a named charset; any other text means alphanumeric, as SecretZero's
    random_string reads it (``charsets.get(name, alphanumeric)``)."""
    return CHARSETS.get(name, CHARSETS[DEFAULT_CHARSET])


def _shown(value: Any, where: str, interpolated: Container[str]) -> str:
    if where in interpolated:
        return "the interpolated value"
    return repr(value) if isinstance(value, str) else f"of type {type(value).__name__}"


def generate(spec: GeneratorSpec, *, allow_scripts: bool, cwd: Path | None = None) -> str:
    """Produce a value; GeneratorError (never containing a value) when that is impossible.

    ``cwd`` is the working directory of script generators (usually the definition's folder).
    """
    if spec.unavailable is not None:
        raise GeneratorError(spec.unavailable)
    if issuer_of(spec.kind) is not None:  # created at its source: ``tokens.issue``, with the providers
        raise GeneratorError(f"{spec.kind} creates its token at sync, through its provider")
    if spec.kind == "script" and not allow_scripts:
        raise GeneratorError("script generator is disabled; set SERVICE_ALLOW_SCRIPTS=true to enable it")
    config = spec.config
    if spec.kind == "random_password" and isinstance(config, Mapping):
        # Checked as validate_generator checks it, its pools kept: thousands of passwords a sync.
        errors: list[str] = []
        length, pools = _password_pools(config, "generator", errors)
        if errors:
            raise GeneratorError("; ".join(errors))
        return password(length, pools)
    errors = validate_generator(spec, "generator")
    if errors:
        raise GeneratorError("; ".join(errors))
    if spec.kind == "random_string":
        charset = charset_of(config.get("charset", DEFAULT_CHARSET))
        length = _int_option(config, "length", 32, "generator", [])
        return "".join(Draw(2 * length + 8).choices(charset, length))
    if spec.kind == "random_hex":
        length = _int_option(config, "length", 32, "generator", [])
        return secrets.token_hex((length + 1) // 2)[:length]
    if spec.kind == "uuid":
        return str(uuid.UUID(bytes=secrets.token_bytes(16), version=4))
    if spec.kind in STATIC_KINDS:
        return static_text(static_value(config))
    return run_script(config, cwd)
