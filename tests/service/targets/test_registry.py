"""The target kind registry: built-in kinds imported on first use, and a kind registered in their
place (a test's fake) wins whenever it is registered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def run(code: str) -> str:
    """``code`` in a new interpreter: the registry as a process starts with it."""
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                          timeout=120).stdout.strip()


@pytest.mark.slow
def test_importing_the_service_does_not_import_the_target_kinds() -> None:
    out = run("import sys, secretsapi.service\n"
              "kinds = ('secretsapi.service.targets.template', 'secretsapi.service.targets.encrypted_files',"
              " 'secretsapi.service.targets.formats', 'tomlkit')\n"
              "print(sorted(m for m in kinds if m in sys.modules))")
    assert out == "[]"


@pytest.mark.slow
def test_a_kind_registered_before_any_lookup_replaces_the_built_in_one() -> None:
    out = run("from secretsapi.service.targets import registry\n"
              "class Fake:\n"
              "    type = 'local/file'\n"
              "fake = registry.register(Fake())\n"
              "print(registry.get_kind('local/file') is fake, 'local/template' in {k.type for k in registry.kinds()})")
    assert out == "True True"


@pytest.mark.slow
def test_the_built_in_kinds_are_there_at_the_first_lookup() -> None:
    out = run("from secretsapi.service.targets import registry\n"
              "print(type(registry.get_kind('local/file')).__name__, len(registry.kinds()))")
    name, count = out.split()
    assert name == "LocalFileKind" and int(count) >= 15
