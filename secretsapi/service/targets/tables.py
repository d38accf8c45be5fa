"""The tables of docs/definitions.md, from the kinds' declarations (``targets.schema``).

``python -m secretsapi.service.targets.tables`` prints them; a test holds the docs to them, so a
kind's settings are written down once, in its module.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from secretsapi.service.targets.registry import kinds, provider_kinds
from secretsapi.service.targets.schema import KindSchema, ProviderSchema, Setting

KINDS_BEGIN = ("<!-- target kinds: generated from each kind's declaration "
               "(python -m secretsapi.service.targets.tables) -->")
PROVIDERS_BEGIN = ("<!-- provider kinds: generated from each provider kind's declaration "
                   "(python -m secretsapi.service.targets.tables) -->")
END = "<!-- end of generated table -->"


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


def _setting(key: str, setting: Setting) -> str:
    name = f"**`{key}`**" if setting.required else f"`{key}`"
    notes = []
    if setting.default not in (None, {}, []):
        notes.append(_shown(setting.default))
    if setting.choices:
        notes.append("one of " + ", ".join(f"`{c}`" for c in setting.choices))
    if setting.aliases:
        notes.append("also " + ", ".join(f"`{a}`" for a in setting.aliases))
    return name + (f" ({'; '.join(notes)})" if notes else "")


def _settings(settings: Mapping[str, Setting]) -> str:
    return ", ".join(_setting(key, setting) for key, setting in settings.items()) or "none"


def _needs(schema: KindSchema) -> str:
    found = []
    for need in schema.needs:
        keys = " or ".join(f"`{k}`" for k in need.keys)
        found.append(f"{keys} required" + (" (else the provider's)" if need.provider else ""))
    return "; " + "; ".join(found) if found else ""


def kinds_table() -> str:
    """One row per target kind: its type, its config keys (bold: required) and its lockfile id."""
    rows = ["| target (`provider/kind`) | config (**bold**: required; default in brackets) | target id |",
            "|---|---|---|"]
    for kind in kinds():
        schema = kind.schema
        rows.append(f"| `{schema.type}` | {_settings(schema.config)}{_needs(schema)} | {schema.target_id} |")
    return "\n".join(rows)


def _auth(provider: ProviderSchema) -> str:
    names = []
    for auth in provider.auth_kinds:
        needs = f" (needs {', '.join(f'`{r}`' for r in auth.requires)})" if auth.requires else ""
        names.append(f"`{auth.name}`{needs}")
    return ", ".join(names) or "none"


def _hosted(provider: ProviderSchema) -> str:
    if not provider.addressed:
        return "only where the server's own settings point"
    return ", ".join(f"`{h.removeprefix('https://')}`" for h in provider.hosted) or "none until listed"


def providers_table() -> str:
    """One row per provider kind: its settings, its auth kinds and auth settings, and where the
    server's own credentials may go without the operator's listing (``egress``)."""
    rows = ["| provider kind | settings (`config`) | auth kinds and settings (`auth`) | the server's credentials "
            "go to, unlisted |", "|---|---|---|---|"]
    for provider in provider_kinds():
        auth = _auth(provider) + (f": {_settings(provider.auth_config)}" if provider.auth_config else "")
        rows.append(f"| `{provider.kind}` | {_settings(provider.config)} | {auth} | {_hosted(provider)} |")
    return "\n".join(rows)


def generated(text: str) -> str:
    """``text`` (docs/definitions.md) with both tables replaced by the current ones."""
    for begin, table in ((KINDS_BEGIN, kinds_table()), (PROVIDERS_BEGIN, providers_table())):
        head, found, rest = text.partition(begin)
        _, ended, tail = rest.partition(END)
        if not found or not ended:
            raise ValueError(f"the docs lack the markers of a generated table: {begin}")
        text = f"{head}{begin}\n{table}\n{END}{tail}"
    return text


if __name__ == "__main__":
    sys.stdout.write("\n".join((KINDS_BEGIN, kinds_table(), END, "", PROVIDERS_BEGIN, providers_table(), END)) + "\n")
