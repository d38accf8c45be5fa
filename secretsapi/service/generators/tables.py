"""The generator table of docs/definitions.md, from each generator's description and options
(``GENERATORS``, the same ones ``GET /secret-types`` lists and validation checks).

``python -m secretsapi.service.generators.tables`` prints it; a test holds the docs to it.
"""

from __future__ import annotations

import sys
from typing import Any

from secretsapi.service.generators import GENERATORS

BEGIN = ("<!-- generator kinds: generated from each generator's options "
         "(python -m secretsapi.service.generators.tables) -->")
END = "<!-- end of generated table -->"


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _option(name: str, option: dict[str, Any]) -> str:
    required = "(required)" in str(option.get("description", ""))
    default = option.get("default")
    shown = f"**`{name}`**" if required else f"`{name}`"
    return shown + ("" if default in (None, "", [], {}) else f" ({_shown(default)})")


def generators_table() -> str:
    """One row per generator kind: what it makes and its config keys (bold: required; default in brackets)."""
    rows = ["| kind | what it makes | config (**bold**: required; default in brackets) |", "|---|---|---|"]
    for kind, spec in GENERATORS.items():
        options = ", ".join(_option(name, option) for name, option in spec.get("options", {}).items()) or "none"
        rows.append(f"| `{kind}` | {spec['description']} | {options} |")
    return "\n".join(rows)


def generated(text: str) -> str:
    """``text`` (docs/definitions.md) with the generator table replaced by the current one."""
    head, found, rest = text.partition(BEGIN)
    _, ended, tail = rest.partition(END)
    if not found or not ended:
        raise ValueError(f"the docs lack the markers of a generated table: {BEGIN}")
    return f"{head}{BEGIN}\n{generators_table()}\n{END}{tail}"


if __name__ == "__main__":
    sys.stdout.write("\n".join((BEGIN, generators_table(), END)) + "\n")
