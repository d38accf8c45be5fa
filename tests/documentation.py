"""The user documentation as one text: README.md and every page under docs/ (tests that pin what it says),
its fenced code blocks, and its shell blocks, command by command, with the page and line each starts on.

A block may carry a mark, an HTML comment on the line before its fence (invisible once rendered):

- ``<!-- file: PATH -->``: the block is the content of the file ``PATH`` (relative to the folder the
  page's commands run in); a page that runs writes it there when its commands reach it;
- ``<!-- output -->``: what the shell block before it prints on stdout (times may differ);
- ``<!-- not run: REASON -->``: a shell block no test runs, and why (it changes the host, needs a
  public name, a Docker daemon...); tests count these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL_LANGUAGES = ("sh", "bash", "console", "shell")
_FENCE = re.compile(r"^```(\S*)\s*$")
_MARK = re.compile(r"^<!--\s*(file|output|not run)\s*(?::\s*(.*?))?\s*-->\s*$")


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
class CodeBlock:
    """One fenced block: its language (the fence's word), its text and its mark, if any."""

    page: str
    line: int  # the opening fence's line, 1-based
    language: str
    text: str
    mark: str | None = None  # "file", "output" or "not run"
    argument: str = ""  # the file's path, or why the block is not run

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class ShellBlock:
    page: str
    line: int  # the opening fence's line, 1-based
    language: str
    commands: tuple[Command, ...]
    not_run: str | None = None  # the reason its mark gives, when no test runs it

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def code_blocks(only: Path | None = None) -> list[CodeBlock]:
    """Every fenced block of the README and the docs pages (or of the page ``only``), in order."""
    blocks = []
    for path in [only] if only is not None else pages():
        page = str(path.relative_to(ROOT))
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            opened = _FENCE.match(lines[i])
            if opened is None:
                i += 1
                continue
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
            assert end is not None, f"{page}:{i + 1}: a fenced block that is never closed"
            before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            marked = _MARK.match(before.strip())
            mark, argument = (marked.group(1), marked.group(2) or "") if marked else (None, "")
            text = "".join(f"{line}\n" for line in lines[i + 1:end])
            blocks.append(CodeBlock(page, i + 1, opened.group(1), text, mark, argument))
            i = end + 1
    return blocks


def shell_blocks() -> list[ShellBlock]:
    """Every fenced ``sh``/``bash``/``console``/``shell`` block of the README and the docs pages.

    Lines that are only a comment continue the comment of the command above them and are left out.
    """
    blocks = []
    for block in code_blocks():
        if block.language in SHELL_LANGUAGES:
            lines = ["", *block.text.splitlines()]  # line i of the list is line block.line + i of the page
            commands = [Command(c.page, c.line + block.line - 1, c.text)
                        for c in _commands(block.page, lines, 1, len(lines))]
            blocks.append(ShellBlock(block.page, block.line, block.language, tuple(commands),
                                     block.argument if block.mark == "not run" else None))
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
