"""The engine stays framework-free."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_service_package_imports_no_django() -> None:
    import secretsapi.service as service

    modules = [m.name for m in pkgutil.walk_packages(service.__path__, "secretsapi.service.")]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules\n"
        "             if m == 'django' or m.startswith('django.') or m.startswith('rest_framework'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
    assert len(modules) > 3


# What an interface may take from the engine: its errors, its results, the type of a progress
# callback and the one grammar of lengths of time (a parser: ``--since 2h``, ``--expires 90d``).
# Everything else goes through secretsapi.actions, so the API, the CLI and the jobs behave and
# audit identically.
INTERFACE_MAY_IMPORT = {"secretsapi.service.errors", "secretsapi.service.results", "secretsapi.service.progress",
                        "secretsapi.service.definition.periods"}


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, ``from package import name`` counted as ``package.name``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _engine_imports(path: Path) -> set[str]:
    return {name for name in _imports(path) if name == "secretsapi.service" or name.startswith("secretsapi.service.")}


def test_interfaces_take_only_errors_and_results_from_the_engine() -> None:
    files = [path for folder in ("api", "management") for path in sorted((ROOT / "secretsapi" / folder).rglob("*.py"))]
    files += sorted((ROOT / "jobs").rglob("*.py"))
    offending = {
        str(path.relative_to(ROOT)): sorted(
            name for name in _engine_imports(path)
            if not any(name == allowed or name.startswith(allowed + ".") for allowed in INTERFACE_MAY_IMPORT)
        )
        for path in files
    }
    assert {path: names for path, names in offending.items() if names} == {}
    assert len(files) > 10


def test_the_engine_imports_nothing_else_of_the_project() -> None:
    offending = {
        str(path.relative_to(ROOT)): sorted(
            name for name in _imports(path)
            if name.split(".")[0] in {"secretsapi", "audit", "project"} and not name.startswith("secretsapi.service")
        )
        for path in sorted((ROOT / "secretsapi" / "service").rglob("*.py"))
    }
    assert {path: names for path, names in offending.items() if names} == {}


def test_no_engine_module_is_over_400_lines() -> None:
    # One idea per module (STYLE.md): a module past this is split, not grown.
    sizes = {str(path.relative_to(ROOT)): len(path.read_text().splitlines())
             for path in (ROOT / "secretsapi" / "service").rglob("*.py")}
    assert {path: lines for path, lines in sizes.items() if lines > 400} == {}


# The engine's layers, lowest first: a module imports only from its own layer or below, so
# every import runs down and no package needs another that needs it back. The definition model
# sits below the generators and target kinds; the checker that loads a file into it
# (``loading``) above them; the lockfile state and the one write path above that; the
# workspace (settings as a value) above the state; the operations (every other top-level
# module) on top.
ENGINE_LAYERS = (
    {"errors", "results", "util"},
    {"definition"},
    {"generators", "targets", "credentials"},
    {"loading"},
    {"state"},
    {"workspace"},
)
ENGINE = ROOT / "secretsapi" / "service"


def _layer(module: str) -> int:
    top = module.split(".")[0]
    return next((index for index, group in enumerate(ENGINE_LAYERS) if top in group), len(ENGINE_LAYERS))


def _engine_module(path: Path) -> str:
    parts = path.relative_to(ENGINE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _engine_targets(path: Path) -> set[str]:
    """Engine modules ``path`` imports, relative to the engine (``from pkg import mod`` as ``pkg.mod``)."""
    found: set[str] = set()
    for name in _engine_imports(path):
        relative = name.removeprefix("secretsapi.service").lstrip(".")
        candidate = ENGINE.joinpath(*relative.split("."))
        is_module = candidate.with_suffix(".py").exists() or (candidate / "__init__.py").exists()
        found.add(relative if is_module else relative.rpartition(".")[0])
    return {name for name in found if name}


def test_engine_imports_run_down_its_layers() -> None:
    upward = sorted(
        f"{_engine_module(path)} -> {target}"
        for path in sorted(ENGINE.rglob("*.py")) if _engine_module(path)
        for target in _engine_targets(path) if _layer(target) > _layer(_engine_module(path))
    )
    assert upward == []


def test_the_layer_rule_sees_modules_imported_from_their_package() -> None:
    # ``from secretsapi.service.state import write`` must count as state.write, or the rule
    # above would miss such imports.
    assert "state.write" in _engine_targets(ENGINE / "sync.py")
    assert _layer("workspace") > _layer("state.write") > _layer("loading.checker") > _layer("targets.files")


def test_the_engine_has_at_most_15_top_level_modules() -> None:
    # Past that the top level stops reading as a list of operations: group into a package.
    assert len(list(ENGINE.glob("*.py"))) <= 15
