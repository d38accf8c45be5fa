"""The user documentation as one text: README.md and every page under docs/ (tests that pin what it says),
and its shell blocks, command by command, with the page and line each starts on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL_LANGUAGES = ("sh", "bash", "console", "shell")
_FENCE = re.compile(r"^```(\S*)\s*$")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def documentation() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in pages())


@dataclass(frozen=True)
class Command:
    """One command as a reader pastes it: its lines joined where they end with a backslash."""

    page: str  # relative to the repository, e.g. "docs/api.md"
    line: int  # where it starts, 1-based
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class ShellBlock:
    page: str
    line: int  # the opening fence's line, 1-based
    language: str
    commands: tuple[Command, ...]

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def shell_blocks() -> list[ShellBlock]:
    """Every fenced ``sh``/``bash``/``console``/``shell`` block of the README and the docs pages.

    Lines that are only a comment continue the comment of the command above them and are left out.
    """
    blocks = []
    for path in pages():
        page = str(path.relative_to(ROOT))
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            opened = _FENCE.match(lines[i])
            if opened is None:
                i += 1
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            if opened.group(1) in SHELL_LANGUAGES:
                blocks.append(ShellBlock(page, i + 1, opened.group(1), tuple(_commands(page, lines, i + 1, end))))
            i = end + 1
    return blocks


def _commands(page: str, lines: list[str], start: int, end: int) -> list[Command]:
    commands: list[Command] = []
    pending: list[str] = []
    first = start
    for j in range(start, end):
        text = lines[j]
        if not pending:
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            first = j
        pending.append(text)
        if not text.endswith("\\"):
            commands.append(Command(page, first + 1, "\n".join(pending)))
            pending = []
    assert not pending, f"{page}:{first + 1}: a command ends with a backslash and nothing after it"
    return commands
