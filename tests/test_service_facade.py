"""``secretsapi.service``'s operations are imported when first used: each name is the operation
whatever was imported before it, and a command that reads a status never loads the write path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import secretsapi.service as service

ROOT = Path(__file__).resolve().parents[1]


def run(code: str) -> str:
    """``code`` in a new interpreter (a fresh import state), its last line of output."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={"DJANGO_SETTINGS_MODULE": "project.settings", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_every_exported_name_is_the_operation_its_module_defines() -> None:
    for name in service.__all__:
        operation = getattr(service, name)  # imports its module
        assert operation is getattr(sys.modules[f"secretsapi.service.{service._EXPORTS[name]}"], name)
    assert sorted(service.__all__) == sorted(service._EXPORTS)


@pytest.mark.slow
def test_an_operation_keeps_its_name_when_its_module_is_imported_first() -> None:
    # The import system sets a package's attribute to each submodule it loads: ``sync`` and
    # ``agent_sync`` are both a module and an operation.
    code = ("import secretsapi.service.agent_sync, secretsapi.service.sync\n"
            "import secretsapi.service as s\n"
            "print(callable(s.sync), callable(s.agent_sync), s.sync.__module__)\n")
    assert run(code) == "True True secretsapi.service.sync"


@pytest.mark.slow
def test_a_status_command_loads_neither_the_write_path_nor_the_renderer() -> None:
    code = ("import sys, django; django.setup()\n"
            "import secretsapi.management.commands.status\n"
            "print(sorted(m for m in ('secretsapi.service.sync', 'secretsapi.service.render',"
            " 'secretsapi.service.agent_sync') if m in sys.modules))\n")
    assert run(code) == "[]"
