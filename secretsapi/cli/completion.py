"""Shell completion of names the definition declares: secrets (``-s``, ``show NAME``, ...) and
environments (``-e``).

Read cheaply, at every press of Tab: the definition file the command line names (``-f``, before
or after the subcommand), else ``./Secretfile.yml``, parsed as plain YAML, without Django, the
engine or variable substitution. (Not ``SERVICE_CONFIG``: the settings alone read the service's
variables, and loading them costs more than a key press may.) A file that cannot be read or
parsed completes nothing; completion never prints an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

# A definition larger than this is not parsed at a key press (a 20,000-secret file is ~3 MB).
MAX_BYTES = 16 * 1024 * 1024


def secrets(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    document = _definition(ctx)
    names = [s.get("name") for s in _list(document.get("secrets")) if isinstance(s, dict)]
    return _matching(names, incomplete)


def environments(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    block = _definition(ctx).get("environments")
    profiles = block.get("profiles") if isinstance(block, dict) else None
    return _matching(list(profiles) if isinstance(profiles, dict) else [], incomplete)


def _matching(names: list[Any], incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(name) for name in dict.fromkeys(names)
            if isinstance(name, str) and name.startswith(incomplete)]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def definition_path(ctx: click.Context) -> Path:
    """The ``-f`` the command line gave (the subcommand's, else the group's), else ./Secretfile.yml."""
    current: click.Context | None = ctx
    while current is not None:
        given = current.params.get("file")
        if given:
            return Path(given)
        current = current.parent
    return Path("Secretfile.yml")


def _definition(ctx: click.Context) -> dict[str, Any]:
    import yaml  # only when completing: 15 ms of the program's start otherwise

    try:
        path = definition_path(ctx)
        if path.stat().st_size > MAX_BYTES:
            return {}
        with path.open("rb") as handle:
            document = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    except (OSError, ValueError, yaml.YAMLError):
        return {}
    return document if isinstance(document, dict) else {}
