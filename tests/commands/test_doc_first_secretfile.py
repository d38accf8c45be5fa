"""docs/first-secretfile.md, run as a newcomer follows it: in a fresh clone, one bash, every block in order.

A block marked ``<!-- file: PATH -->`` is written to PATH when the page reaches it (from the folder
its commands are in by then); every shell command must exit 0 (the page writes ``|| echo "exit code
$?"`` where it shows a failure); a block marked ``<!-- output -->`` must be what the shell block
before it printed on stdout, but for times (``2026-11-28 03:52:08``, ISO 8601 ones), which are the
run's. ``localhost:8000`` becomes a free port; nothing else is changed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docsession import Ran, clean_env, explain, run_session
from tests.documentation import SHELL_LANGUAGES, Command, ShellBlock, code_blocks, shell_blocks
from tests.processes.live import free_port

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "first-secretfile.md"
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / ".venv" / ".installed").exists(), reason="needs this checkout's installed .venv"),
]


def steps() -> tuple[list[Command], list[tuple[ShellBlock, str]]]:
    """The page's commands in order (file blocks as commands that write them), and each shell block
    followed by an output block, with that output."""
    commands: list[Command] = []
    shown: list[tuple[ShellBlock, str]] = []
    shells = {b.line: b for b in shell_blocks() if b.page == "docs/first-secretfile.md"}
    last: ShellBlock | None = None
    for block in code_blocks(PAGE):
        if block.mark == "file":
            assert "EOF_OF_THE_PAGE" not in block.text
            folder = str(Path(block.argument).parent)
            commands.append(Command(block.page, block.line, f"mkdir -p '{folder}' && cat > '{block.argument}' "
                                    f"<<'EOF_OF_THE_PAGE'\n{block.text}EOF_OF_THE_PAGE"))
        elif block.language in SHELL_LANGUAGES:
            last = shells[block.line]
            commands += last.commands
        elif block.mark == "output":
            assert last is not None, f"{block.where}: an output block with no shell block before it"
            shown.append((last, block.text))
            last = None
    return commands, shown


def printed(ran: list[Ran], block: ShellBlock) -> str:
    return "".join(r.out for r in ran if r.command in block.commands)


def masked(text: str) -> str:
    return _TIME.sub("<time>", text).rstrip("\n")


def test_every_output_block_follows_a_shell_block_and_every_file_block_names_a_relative_path() -> None:
    _, shown = steps()
    assert len(shown) >= 10 and all(text.strip() for _, text in shown)
    for block in code_blocks(PAGE):
        if block.mark == "file":
            assert not Path(block.argument).is_absolute() and ".." not in Path(block.argument).parts, block.where


def test_the_first_secretfile_page_runs_step_by_step_as_shown(clone: Path, python_shim: Path, tmp_path: Path) -> None:
    commands, shown = steps()
    port = free_port()
    ran = run_session(commands, cwd=clone, env=clean_env(python_shim, SERVICE_PORT=str(port)), logs=tmp_path / "logs",
                      replace={"localhost:8000": f"localhost:{port}"}, deadline_s=300)
    assert explain(ran) == ""
    for block, text in shown:
        assert masked(printed(ran, block)) == masked(text), f"{block.where}: printed\n{printed(ran, block)}"
