"""The floors of the whole project, enforced: the engine framework-free at the bottom, then the
records, the actions and the faces; no import runs upwards, no import circle anywhere, no module
past 400 lines."""

from __future__ import annotations

import ast
import functools
import os
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
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


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """Each file parsed once per test process (several tests read every module of the project)."""
    return ast.parse(path.read_text(), str(path))


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, ``from package import name`` counted as ``package.name``."""
    found: set[str] = set()
    for node in ast.walk(_parsed(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _engine_imports(path: Path) -> set[str]:
    return {name for name in _imports(path) if name == "secretsapi.service" or name.startswith("secretsapi.service.")}


def test_interfaces_take_only_errors_and_results_from_the_engine() -> None:
    files = [path for folder in ("api", "management", "cli", "admin")
             for path in sorted((ROOT / "secretsapi" / folder).rglob("*.py"))]
    apps = ("audit", "apikeys", "projects", "webhooks", "jobs", "metrics", "deployment", "adminusers")
    files += [path for app in apps for path in sorted((ROOT / app).rglob("*.py"))]
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


# The whole project's floors, lowest first (STYLE.md, "Layout"). A module imports only from its
# own floor or below: records never import an action or a face, actions never a face, nothing
# imports project/ (settings, URLs, WSGI: the top). Each entry is a folder, a package or a module,
# as paths; a module belongs to the longest entry that holds it, and every module of the project
# (tests aside) belongs to one. Within the records one order holds too: audit at the bottom (every
# app writes rows through its recorder and listeners), then the apps that write rows, then the
# webhook outbox (jobs raise ``job.failed``), then jobs and the metrics' tallies.
FLOORS: tuple[tuple[str, ...], ...] = (
    # the engine, framework-free
    ("secretsapi/service",),
    # plain helpers of the Django side: version, pages, database errors and locks, definitions' store, logs
    ("secretsapi/__init__.py", "secretsapi/apps.py", "secretsapi/pages.py", "secretsapi/database_errors.py",
     "secretsapi/database_locks.py", "secretsapi/definition_store.py", "secretsapi/log_format.py"),
    # records: models and their only writers
    ("audit",),
    ("projects", "apikeys", "deployment"),
    ("webhooks",),
    ("jobs", "metrics"),
    # actions: one function per operation; job submission (its task's path, secretsapi.operations.run_job,
    # is stored in every queued job's row, so the module keeps its name)
    ("secretsapi/actions", "secretsapi/operations.py"),
    # faces: thin interfaces over the actions
    ("secretsapi/api", "secretsapi/cli", "secretsapi/management", "secretsapi/admin", "adminusers"),
    # the top: settings, URLs, WSGI, the entry point, the benchmarks that drive it all
    ("project", "manage.py", "bench"),
)
LINES_MAX = 400
NOT_MODULES = {"tests", ".venv", ".git", "data", "__pycache__", ".mypy_cache", ".ruff_cache", "node_modules"}


def project_files(root: Path) -> list[Path]:
    """Every Python module of the project under ``root`` (tests and virtualenvs aside)."""
    return list(_project_files(root))


@functools.cache
def _project_files(root: Path) -> tuple[Path, ...]:
    found = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [name for name in subfolders if name not in NOT_MODULES]  # never into .venv
        found += [Path(folder, name) for name in names if name.endswith(".py")]
    return tuple(sorted(found))


def _module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def file_imports(root: Path, files: Sequence[Path]) -> dict[Path, set[Path]]:
    """Each file's imports of the project's own files: ``from package import module`` counts as the
    module (not the package's ``__init__``), relative imports resolved, imports inside functions too."""
    return {path: set(targets) for path, targets in _file_imports(root, tuple(files)).items()}


@functools.cache
def _file_imports(root: Path, files: tuple[Path, ...]) -> dict[Path, set[Path]]:
    by_name = {_module_name(root, path): path for path in files}
    found: dict[Path, set[Path]] = {}
    for path in files:
        package = _module_name(root, path).split(".")
        if path.name != "__init__.py":
            package = package[:-1]
        names: list[str] = []
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join([*package[: len(package) - node.level + 1], node.module or ""] if node.level
                                else [node.module or ""]).strip(".")
                names += [f"{base}.{alias.name}" if f"{base}.{alias.name}" in by_name else base
                          for alias in node.names]
        targets = set()
        for name in names:
            while name and name not in by_name:
                name = name.rpartition(".")[0]
            if name and by_name[name] != path:
                targets.add(by_name[name])
        found[path] = targets
    return found


def floor_of(root: Path, path: Path, floors: Sequence[Iterable[str]]) -> int | None:
    """The index of the floor whose longest entry holds ``path``; None: in no floor."""
    relative = path.relative_to(root).as_posix()
    holding = [(len(entry), index) for index, entries in enumerate(floors) for entry in entries
               if relative == entry or relative.startswith(entry.rstrip("/") + "/")]
    return max(holding)[1] if holding else None


def upward_imports(root: Path, floors: Sequence[Iterable[str]]) -> list[str]:
    """``importer -> imported`` for every import of a higher floor's module."""
    imports = file_imports(root, project_files(root))
    return sorted(f"{path.relative_to(root)} -> {target.relative_to(root)}"
                  for path, targets in imports.items() for target in targets
                  if (floor_of(root, target, floors) or 0) > (floor_of(root, path, floors) or 0))


def import_circles(root: Path) -> list[list[str]]:
    """Every set of modules that import one another round a circle (Tarjan's components)."""
    graph = file_imports(root, project_files(root))
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    circles: list[list[str]] = []

    def visit(start: Path) -> None:  # iterative: a deep chain must not reach the recursion limit
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(str(member.relative_to(root)))
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))

    for path in graph:
        if path not in index:
            visit(path)
    return sorted(circles)


def test_every_module_of_the_project_is_on_a_floor() -> None:
    files = project_files(ROOT)
    assert [str(path.relative_to(ROOT)) for path in files if floor_of(ROOT, path, FLOORS) is None] == []
    assert len(files) > 300


def test_no_import_runs_up_a_floor() -> None:
    assert upward_imports(ROOT, FLOORS) == []


def test_no_modules_import_one_another_round_a_circle() -> None:
    assert import_circles(ROOT) == []


def test_no_module_of_the_project_is_over_400_lines() -> None:
    # One idea per module (STYLE.md): a module past this is split, not grown.
    sizes = {str(path.relative_to(ROOT)): len(path.read_text().splitlines()) for path in project_files(ROOT)}
    assert {path: lines for path, lines in sizes.items() if lines > LINES_MAX} == {}


def test_the_actions_leave_webhooks_and_metrics_to_their_listeners() -> None:
    # What an outcome raises and counts is recorded by the listeners the webhooks and metrics apps
    # subscribe (audit.listeners), in the audit row's transaction: an action calls none of their writers.
    writers = re.compile(r"\b(outbox\.enqueue|events\.raised|drift_detected|new_drift|tally\.add"
                         r"|tally\.drift_checked)\(")
    actions = [*sorted((ROOT / "secretsapi" / "actions").rglob("*.py")), ROOT / "secretsapi" / "operations.py"]
    calls = [f"{path.relative_to(ROOT)}:{number}" for path in actions
             for number, line in enumerate(path.read_text().splitlines(), 1) if writers.search(line)]
    assert calls == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_floor_rule_catches_a_record_importing_an_action(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "records/__init__.py": "", "records/models.py": "X = 1\n",
        "records/recorder.py": "def write():\n    from actions.ops import run\n",
        "actions/__init__.py": "", "actions/ops.py": "from records import models, recorder\nrun = models.X\n",
        "faces/views.py": "from actions import ops\n",
    })
    floors = (("records",), ("actions",), ("faces",))
    assert upward_imports(root, floors) == ["records/recorder.py -> actions/ops.py"]
    assert import_circles(root) == [["actions/ops.py", "records/recorder.py"]]


def test_the_circle_rule_sees_relative_imports_and_modules_imported_from_their_package(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "app/__init__.py": "from app import a\n", "app/a.py": "from . import b\n", "app/b.py": "from .c import name\n",
        "app/c.py": "from app import a\nname = 1\n",
    })
    # ``from app import a`` is app/a.py, not the package: the package's own import of it is no circle.
    assert import_circles(root) == [["app/a.py", "app/b.py", "app/c.py"]]
    assert upward_imports(root, (("app",),)) == []
