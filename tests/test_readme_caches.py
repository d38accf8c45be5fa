"""The README's table of caches names tests that exist, so the table cannot drift from them."""

from __future__ import annotations

import re
from pathlib import Path

from tests.documentation import documentation

ROOT = Path(__file__).resolve().parents[1]


def _cache_rows() -> list[str]:
    text = documentation()
    start = text.index("| cache | key | invalidated by | pinned by |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[-2])
    return rows


def test_every_cache_row_names_existing_test_files_and_tests() -> None:
    rows = _cache_rows()
    assert len(rows) >= 8
    for pinned in rows:
        references = re.findall(r"`(tests/[^`:]+\.py)(?:::(test_\w+))?`", pinned)
        assert references, pinned
        for path, test in references:
            source = (ROOT / path).read_text()
            if test:
                assert f"def {test}(" in source, (path, test)


def test_every_cache_module_named_in_the_table_exists() -> None:
    modules = re.findall(r"\(`((?:service|api)/[\w/]+\.py)`", documentation())
    assert len(modules) >= 6
    for module in modules:
        assert (ROOT / "secretsapi" / module).is_file(), module
