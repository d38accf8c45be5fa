"""tests/tiers.py: what ``make check`` keeps, and its refusal of processes and sockets."""

from __future__ import annotations

import ast
import functools
import importlib
import multiprocessing
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests import tiers
from tests.peers.http_peer import Peer


class Item:
    """What the tier reads of a collected test: its markers and its fixtures."""

    def __init__(self, name: str, *markers: str, fixtures: tuple[str, ...] = ()) -> None:
        self.name, self.markers, self.fixturenames = name, set(markers), fixtures

    def get_closest_marker(self, name: str) -> Any:
        return name if name in self.markers else None

    def add_marker(self, marker: Any) -> None:
        self.markers.add(marker.name)


def test_the_unit_tier_keeps_unmarked_tests_and_reports_the_rest_deselected() -> None:
    items: list[Any] = [Item("plain"), *(Item(name, name) for name in tiers.NOT_UNIT),
                        Item("peer", fixtures=("vault",))]
    deselected: list[Any] = []
    config: Any = SimpleNamespace(hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)))
    tiers.mark_servers(items)
    tiers.keep_unit_tier(config, items)
    assert [item.name for item in items] == ["plain"]
    assert [item.name for item in deselected] == [*tiers.NOT_UNIT, "peer"]


def test_inside_the_unit_tier_a_process_is_refused_naming_the_slow_marker() -> None:
    before = subprocess.Popen.__init__
    with tiers.nothing_started(), pytest.raises(tiers.StartedSomething, match=r"mark the test pytest\.mark\.slow"):
        subprocess.run(["true"], check=False)
    assert subprocess.Popen.__init__ is before  # put back after


def test_inside_the_unit_tier_multiprocessing_is_refused_too() -> None:
    with tiers.nothing_started(), pytest.raises(tiers.StartedSomething, match=r"pytest\.mark\.slow"):
        multiprocessing.get_context("spawn").Process(target=print).start()


def test_inside_the_unit_tier_a_listening_socket_is_refused_naming_the_server_marker() -> None:
    with tiers.nothing_started(), socket.socket() as sock, pytest.raises(
            tiers.StartedSomething, match=r"mark the test pytest\.mark\.server"):
        sock.bind(("127.0.0.1", 0))


def test_in_make_test_a_test_the_unit_tier_keeps_is_refused_a_process_too() -> None:
    plain: Any = Item("plain")
    with tiers.held_to_the_unit_tier(plain), pytest.raises(tiers.StartedSomething, match=r"pytest\.mark\.slow"):
        subprocess.run(["true"], check=False)


def test_in_make_test_a_marked_test_may_start_what_its_marker_says() -> None:
    before = subprocess.Popen.__init__, socket.socket.bind
    for name in tiers.NOT_UNIT:
        marked: Any = Item(name, name)
        with tiers.held_to_the_unit_tier(marked):
            assert (subprocess.Popen.__init__, socket.socket.bind) == before


# --- Every test of a fixture that starts a server leaves the unit tier -----------------------------

TESTS = Path(__file__).resolve().parent
# What starts a server or a process when a fixture calls it (besides every peer of tests/peers).
STARTERS = {("moto.server", "ThreadedMotoServer"), ("tests.processes.live", "start_server"),
            ("tests.processes.proxy", "start_proxy"), ("tests.processes", "mariadb"), ("selenium.webdriver", ""),
            ("tests.peers.webhook_receiver", "webhook_receiver")}
STARTING_FIXTURES = {"live_server", "servers"}  # pytest-django's live server; tests/processes/live.py


@dataclass(frozen=True)
class Function:
    """A fixture or a test, as read from its file."""

    path: Path
    name: str
    takes: frozenset[str]
    starts: bool  # calls a peer or a starter itself (fixtures)
    marked: bool  # out of the unit tier by its own marker or its module's (tests)


def _marker_names(node: ast.AST) -> set[str]:
    return {sub.attr for sub in ast.walk(node) if isinstance(sub, ast.Attribute)} & set(tiers.NOT_UNIT)


def _is_fixture(function: ast.FunctionDef) -> bool:
    return any(isinstance(call := (d.func if isinstance(d, ast.Call) else d), ast.Attribute) and call.attr == "fixture"
               for d in function.decorator_list)


def _starts(module: str, name: str) -> bool:
    if (module, name) in STARTERS:
        return True
    if not module.startswith("tests.peers."):
        return False
    found = getattr(importlib.import_module(module), name, None)
    return isinstance(found, type) and issubclass(found, Peer)


def _calls(function: ast.FunctionDef, imported: dict[str, tuple[str, str]]) -> set[tuple[str, str]]:
    """What a function calls, as (module, name) of what it imported; ("", "getfixturevalue") for a
    fixture that takes others by name (it may start any of them)."""
    called = set()
    for sub in ast.walk(function):
        if isinstance(sub, ast.Call):
            root = sub.func
            while isinstance(root, ast.Attribute):
                if root.attr == "getfixturevalue":
                    called.add(("", "getfixturevalue"))
                root = root.value
            if isinstance(root, ast.Name) and root.id in imported:
                called.add(imported[root.id])
    return called


def _read(path: Path) -> tuple[list[Function], list[Function]]:
    """The fixtures and the tests a file defines."""
    tree = ast.parse(path.read_text())
    imported: dict[str, tuple[str, str]] = {}
    functions: list[ast.FunctionDef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.update({alias.asname or alias.name: (node.module, alias.name) for alias in node.names})
        elif isinstance(node, ast.FunctionDef):
            functions.append(node)
    # name = pytest.importorskip("module"): the module itself, as ("module", "")
    imported.update({node.targets[0].id: (str(node.value.args[0].value), "") for node in tree.body
                     if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                     and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                     and node.value.func.attr == "importorskip" and isinstance(node.value.args[0], ast.Constant)})
    module_marked = any(isinstance(node, ast.Assign) and _marker_names(node.value)
                        and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
                        for node in tree.body)
    fixtures, tests = [], []
    for node in functions:
        takes = frozenset(arg.arg for arg in node.args.args)
        if _is_fixture(node):
            called = _calls(node, imported)
            starts = ("", "getfixturevalue") in called or any(_starts(*each) for each in called)
            fixtures.append(Function(path, node.name, takes, starts, module_marked))
        elif node.name.startswith("test_"):
            marked = module_marked or any(_marker_names(d) for d in node.decorator_list)
            tests.append(Function(path, node.name, takes, False, marked))
    return fixtures, tests


@functools.cache
def _read_all() -> tuple[dict[tuple[Path, str], Function], list[Function]]:
    """Every fixture by (file, name), and every test."""
    fixtures: list[Function] = []
    tests: list[Function] = []
    for path in sorted(TESTS.rglob("*.py")):
        found, tested = _read(path)
        fixtures.extend(found)
        tests.extend(tested)
    return {(f.path, f.name): f for f in fixtures}, tests


@functools.cache
def _lookup(path: Path) -> tuple[Path, ...]:
    """Where a fixture of ``path`` is looked for: the file, then each conftest.py up to tests/."""
    return (path, *(folder / "conftest.py" for folder in path.parents if folder.is_relative_to(TESTS)))


def _resolve(fixtures: dict[tuple[Path, str], Function], path: Path, name: str) -> Function | None:
    """The fixture ``name`` as a test or fixture of ``path`` gets it: its own module's, else the
    nearest conftest.py's (pytest's own lookup, less plugins)."""
    for where in _lookup(path):
        if (where, name) in fixtures:
            return fixtures[where, name]
    return None


def _closure(fixtures: dict[tuple[Path, str], Function], function: Function) -> set[Function | str]:
    """Every fixture a function gets, through the fixtures it takes (names pytest alone knows kept as names)."""
    seen: set[Function | str] = set()
    todo = [(function.path, name) for name in function.takes]
    while todo:
        path, name = todo.pop()
        fixture = _resolve(fixtures, path, name)
        if fixture is None:
            seen.add(name)
        elif fixture not in seen:
            seen.add(fixture)
            todo.extend((fixture.path, taken) for taken in fixture.takes)
    return seen


def _starts_something(got: set[Function | str]) -> bool:
    return any(each in STARTING_FIXTURES if isinstance(each, str) else each.starts for each in got)


def _named_server(got: set[Function | str]) -> bool:
    return any((each if isinstance(each, str) else each.name) in tiers.SERVER_FIXTURES for each in got)


def test_every_test_of_a_fixture_that_starts_a_server_is_out_of_the_unit_tier() -> None:
    """A test getting a fixture that starts a peer, a process or a live server carries a marker (its
    own or its module's) or gets a fixture of SERVER_FIXTURES: else it stays in ``make check`` and
    fails there."""
    fixtures, tests = _read_all()
    unmarked = []
    for test in tests:
        got = _closure(fixtures, test)
        if _starts_something(got) and not test.marked and not _named_server(got):
            unmarked.append(f"{test.path.relative_to(TESTS)}::{test.name}")
    assert unmarked == []


def test_every_server_fixture_starts_something_wherever_a_fixture_has_its_name() -> None:
    """A name in SERVER_FIXTURES shared by a fixture that starts nothing would take that fixture's
    tests out of ``make check`` for nothing."""
    fixtures, _ = _read_all()
    idle = [f"{f.path.relative_to(TESTS)}::{f.name}" for f in fixtures.values()
            if f.name in tiers.SERVER_FIXTURES and not _starts_something(_closure(fixtures, f) | {f})]
    assert idle == []
    assert {f.name for f in fixtures.values()} >= tiers.SERVER_FIXTURES


class Collected(Item):
    def __init__(self, nodeid: str, *markers: str) -> None:
        super().__init__(nodeid, *markers)
        self.nodeid = nodeid


def test_make_test_runs_the_longest_modules_first_then_the_processes_then_the_rest() -> None:
    from tests import conftest

    first, second = conftest.LONGEST_FIRST[:2]
    items: list[Any] = [Collected("tests/api/test_x.py::test_a"), Collected("tests/api/test_y.py::test_b", "slow"),
                        Collected(f"{second}::test_c"), Collected(f"{first}::test_d")]
    items.sort(key=conftest._longest_first)
    assert [item.nodeid.rpartition("_")[2] for item in items] == ["d", "c", "b", "a"]


def test_every_module_of_the_longest_first_exists() -> None:
    from tests import conftest

    assert [name for name in conftest.LONGEST_FIRST if not (TESTS.parent / name).is_file()] == []


@pytest.mark.parametrize(("top", "left_out"), [
    ("pytestmark = pytest.mark.slow\n", True),
    ("pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]\n", True),
    ("pytestmark = [\n    pytest.mark.slow,\n    pytest.mark.skipif(True, reason='x'),\n]\n", True),
    ("pytestmark = [\n    pytest.mark.django_db,\n    pytest.mark.slow,\n]\n", False),  # imported, its tests deselected
    ("pytestmark = pytest.mark.django_db\n", False),
    ("pytestmark = pytest.mark.slowish\n", False),
    ("def test_x():\n    pytestmark = pytest.mark.slow\n", False),
])
def test_only_a_module_marked_out_as_a_whole_is_left_uncollected_by_the_unit_tier(
    tmp_path: Path, top: str, left_out: bool
) -> None:
    module = tmp_path / "test_m.py"
    module.write_text("import pytest\n" + top)
    assert tiers.marked_out_as_a_whole(module) is left_out
