"""The engine stays framework-free."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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


# What an interface may take from the engine: its errors, its results and the type of a progress
# callback. Everything else goes through secretsapi.actions, so the API, the CLI and the jobs
# behave and audit identically.
INTERFACE_MAY_IMPORT = {"secretsapi.service.errors", "secretsapi.service.results", "secretsapi.service.progress"}


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
