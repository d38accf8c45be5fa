"""The two tiers of the suite: ``make test`` runs every test; ``make check`` (``pytest --unit``) runs
the unit tier, in-process and in seconds: every test but those marked (or found) to need more.

A test leaves the unit tier by a marker (pytest.ini): ``slow`` (starts processes), ``server``
(starts a server in the test's process: a protocol peer, a webhook receiver, a live server),
``postgres``, ``fuzz``, ``thorough`` (takes seconds by design: floods, races, deadlines, huge
inputs, exhaustive matrices whose cases repeat what the unit tier checks once), ``migrations``
(migrates a test database back and forth: ``make check`` builds its tables from the models,
``--no-migrations``, 1-1.5 s of each worker's start). ``server`` is
also given to every test using a fixture of ``SERVER_FIXTURES``. Starting a process or binding a
socket fails a test of the unit tier, naming the marker it lacks, so the tier stays what it says:
under ``--unit`` for the whole session, and in ``make test`` around each such test's set-up and
call (a test added without its marker fails the suite, not only ``make check``).
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
from collections.abc import Iterator
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, NoReturn

import pytest

# Fixtures that start a server (tests/service/targets/conftest.py, tests/targets/conftest.py,
# tests/audit/test_admin_browser.py, tests/service/credentials/conftest.py,
# tests/service/generators/conftest.py, the listeners of tests/security/test_credential_addresses.py
# and tests/service/targets/test_transport.py): a test using one is a ``server`` test.
# tests/test_tiers.py fails when a fixture starting a peer is missing here.
SERVER_FIXTURES = frozenset({
    "moto_url", "aws", "vault", "kube", "keyvault", "vercel", "github", "gitlab", "jenkins", "infisical", "stores",
    "browser", "mariadb_url", "azdo", "github_app", "listener", "proxy",
})
# What the unit tier leaves to ``make test``.
NOT_UNIT = ("slow", "server", "postgres", "fuzz", "thorough", "migrations")


# A module marked out of the unit tier as a whole (``pytestmark = pytest.mark.slow``, or a list
# naming one of NOT_UNIT on its first line or as its first item): under ``--unit`` it is not even
# imported. Importing the fuzz, browser and process modules (schemathesis, selenium, peers, their
# fixtures) took 2.7 s of each worker's start.
_MODULE_MARK = re.compile(r"^pytestmark\s*=(?:[^\n]*|\s*\[\s*)\bpytest\.mark\.(?:{})\b".format("|".join(NOT_UNIT)),
                          re.MULTILINE)


def marked_out_as_a_whole(path: Path) -> bool:
    """Whether the test module at ``path`` is marked out of the unit tier at its top."""
    return path.name.startswith("test_") and path.suffix == ".py" and bool(_MODULE_MARK.search(path.read_text()))


class StartedSomething(RuntimeError):
    """A unit-tier test started a process or a server."""


def mark_servers(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.server)


def in_unit_tier(item: pytest.Item) -> bool:
    return not any(item.get_closest_marker(name) for name in NOT_UNIT)


def keep_unit_tier(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        (kept if in_unit_tier(item) else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
    items[:] = kept


def held_to_the_unit_tier(item: pytest.Item) -> contextlib.AbstractContextManager[None]:
    """Around a test's set-up and call in ``make test``: a test the unit tier keeps starts nothing
    there either, so a test missing its marker fails the whole suite (and CI), not only
    ``make check``."""
    return nothing_started() if in_unit_tier(item) else contextlib.nullcontext()


@contextlib.contextmanager
def nothing_started() -> Iterator[None]:
    """Starting a process (``subprocess``, ``multiprocessing``, ``os.fork``) or binding a socket
    raises inside: the unit tier does neither."""
    popen, start, fork, bind = subprocess.Popen.__init__, BaseProcess.start, os.fork, socket.socket.bind

    def no_process(self: Any, args: Any = "", *rest: Any, **options: Any) -> NoReturn:
        raise StartedSomething(f"the unit tier (make check) starts no process ({args!r}): mark the test "
                               "pytest.mark.slow, and make test runs it")

    def no_fork() -> int:
        return no_process(None, "os.fork()")

    def no_server(self: socket.socket, address: Any) -> None:
        raise StartedSomething(f"the unit tier (make check) binds no socket ({address!r}): mark the test "
                               "pytest.mark.server, and make test runs it")

    subprocess.Popen.__init__ = no_process  # type: ignore[method-assign]
    BaseProcess.start = no_process  # type: ignore[method-assign]
    os.fork = no_fork
    socket.socket.bind = no_server  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        subprocess.Popen.__init__ = popen  # type: ignore[method-assign]
        BaseProcess.start = start  # type: ignore[method-assign]
        os.fork = fork
        socket.socket.bind = bind  # type: ignore[method-assign]
