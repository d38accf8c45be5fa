"""Every fenced block of README.md and docs/*.md is checked by what it is: a definition by the real
loader, other YAML and JSON by their parsers, Python by the compiler, a text block only as a file, an
output or a marked example (shell blocks are run: tests/commands/test_doc_shell_blocks.py); and every
link between the pages, with its anchor, and every section a page names in quotes, resolves."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from secretsapi.service.definition.var_files import is_definition
from secretsapi.service.definition.yaml_loader import load_yaml
from secretsapi.service.validate import validate_file
from tests.documentation import SHELL_LANGUAGES, CodeBlock, code_blocks, pages

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = code_blocks()
LANGUAGES = {*SHELL_LANGUAGES, "yaml", "json", "python", "text"}
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_QUOTED = re.compile(r"(?:\b[Ss]ee|README,?|Operations,|Configuration,|Definitions,|Commands,) \"([^\"]+)\"")


def of(language: str) -> list[CodeBlock]:
    return [b for b in BLOCKS if b.language == language]


def ids(blocks: list[CodeBlock]) -> list[str]:
    return [b.where for b in blocks]


def test_every_block_names_a_language_this_suite_checks() -> None:
    assert [(b.where, b.language) for b in BLOCKS if b.language not in LANGUAGES] == []


def test_every_text_block_is_a_file_an_output_or_marked_with_why_it_is_not_run() -> None:
    for block in of("text"):
        assert block.mark in ("file", "output", "not run"), f"{block.where}: a text block with no mark"
        if block.mark == "not run":
            assert len(block.argument.split()) >= 5, f"{block.where}: say why it is not run"


def test_an_output_mark_follows_a_shell_block() -> None:
    for previous, block in itertools.pairwise(BLOCKS):
        if block.mark == "output":
            assert previous.page == block.page and previous.language in SHELL_LANGUAGES, block.where


@pytest.mark.parametrize("block", of("yaml"), ids=ids(of("yaml")))
def test_a_yaml_block_parses_and_a_definition_is_valid_for_the_loader(block: CodeBlock, tmp_path: Path) -> None:
    document = load_yaml(block.text, source=block.where)
    if not (isinstance(document, dict) and is_definition(document)):
        return
    # The page's other files (its var files, its templates) beside it, as the page has them.
    for other in code_blocks(ROOT / block.page):
        if other.mark == "file" and other is not block and other.line != block.line:
            (tmp_path / other.argument).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / other.argument).write_text(other.text)
    definition = tmp_path / (block.argument if block.mark == "file" else "Secretfile.yml")
    definition.write_text(block.text)
    report = validate_file(definition, environ={})
    assert (report.valid, report.errors, report.warnings) == (True, [], []), block.where


@pytest.mark.parametrize("block", of("json"), ids=ids(of("json")))
def test_a_json_block_parses_as_one_document_or_as_json_lines(block: CodeBlock) -> None:
    try:
        json.loads(block.text)
    except json.JSONDecodeError:
        for line in filter(str.strip, block.text.splitlines()):
            json.loads(line)


@pytest.mark.parametrize("block", of("python"), ids=ids(of("python")))
def test_a_python_block_compiles(block: CodeBlock) -> None:
    compile(block.text, block.where, "exec")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        fenced ^= line.startswith("```")
        if not fenced and (heading := re.match(r"#{1,6} (.+)", line)):
            base = slug(heading.group(1))
            anchor = base
            number = 0
            while anchor in found:
                number += 1
                anchor = f"{base}-{number}"
            found.add(anchor)
    return found


def test_slugs_are_githubs() -> None:
    assert slug("Command line (`secretsctl`)") == "command-line-secretsctl"
    assert slug("`var_files` on every operation") == "var_files-on-every-operation"
    assert slug("1. A folder for the project") == "1-a-folder-for-the-project"


@pytest.mark.parametrize("page", pages(), ids=[str(p.relative_to(ROOT)) for p in pages()])
def test_every_link_between_the_pages_and_its_anchor_resolves(page: Path) -> None:
    broken = []
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: another site's
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading {anchor!r} in {linked.relative_to(ROOT)}")
    assert broken == []


def sections() -> set[str]:
    """Every heading, and every paragraph's bold lead-in (``**Backups that restore.**``), of every page."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages())
    headings = {h.strip() for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}
    leads = {lead.rstrip(".:") for lead in re.findall(r"^\s*(?:[-*] )?\*\*([^*\n]+)\*\*", text, re.M)}
    return headings | leads


def test_every_section_a_page_names_in_quotes_exists() -> None:
    known = sections()
    missing = [f"{page.relative_to(ROOT)}: {name!r}" for page in pages()
               for name in _QUOTED.findall(page.read_text(encoding="utf-8")) if " ".join(name.split()) not in known]
    assert missing == []
