"""Shared fixtures: API clients that send the real header, and a known key; jobs in-process."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from secretsapi.service.state.identity import sync_identity
from tests import inline_jobs, tiers
from tests.factories import TEST_KEY, Project


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--unit", action="store_true", default=False,
                     help="Only the unit tier (make check): no processes, servers, PostgreSQL or fuzzing; a test "
                          "that starts a process or binds a socket fails, naming the marker it needs.")


def pytest_sessionstart(session: pytest.Session) -> None:
    # The lockfile's sync identity names the platform as SecretZero does (platform.platform(), which
    # runs `uname -p` once per process): read before starting is refused, as a server reads it once.
    sync_identity()


@pytest.fixture(autouse=True, scope="session")
def _unit_tier_starts_nothing(request: pytest.FixtureRequest) -> Iterator[None]:
    """Under ``--unit``, starting a process or binding a socket is an error (session-wide: the
    session fixtures that start peers come after this one)."""
    if not request.config.getoption("unit"):
        yield
        return
    with tiers.nothing_started():
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """In ``make test`` too, a test the unit tier keeps starts no process or server (tests/tiers.py)."""
    with contextlib.nullcontext() if item.config.getoption("unit") else tiers.held_to_the_unit_tier(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with contextlib.nullcontext() if item.config.getoption("unit") else tiers.held_to_the_unit_tier(item):
        return (yield)


@pytest.fixture(autouse=True, scope="session")
def _jobs_run_in_process() -> Iterator[None]:
    """Jobs run in the test's process as they are queued (tests/inline_jobs.py), so the API's
    tests see what a worker would do; tests/processes/ start real workers."""
    inline_jobs.run_in_process()
    yield
    inline_jobs.stop_running()


@pytest.fixture(autouse=True)
def _in_process_costs(settings: Any) -> None:
    """Two costs of in-process tests that no test is about; the processes the tests start (real
    servers, commands) keep the production settings, so both paths stay tested there.

    Django's cheapest password hasher: the default (PBKDF2, a million rounds) spends ~0.5 s of CPU
    on every superuser an admin test creates and every login it checks. WhiteNoise finding static
    files when asked rather than when the middleware starts: every test client starts the
    middleware, and its scan of the ~170 static files was ~15% of an API test's CPU."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.WHITENOISE_AUTOREFRESH = True


@pytest.fixture
def api_key(settings: Any) -> str:
    settings.SERVICE_API_KEY = TEST_KEY
    return TEST_KEY


@pytest.fixture
def insecure(settings: Any) -> None:
    settings.SERVICE_API_KEY = None


@pytest.fixture
def api(db: None, api_key: str) -> APIClient:
    """A client with no key, against a server that requires one."""
    return APIClient()


@pytest.fixture
def authed_api(db: None, api_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key)
    return client


@pytest.fixture
def project(tmp_path: Path, settings: Any) -> Project:
    settings.SERVICE_CONFIG = tmp_path / "Secretfile.yml"
    settings.SERVICE_LOCKFILE = None
    settings.SERVICE_ALLOW_SCRIPTS = False
    return Project(tmp_path)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``--unit``, a module marked out of the unit tier as a whole is not collected."""
    if config.getoption("unit") and collection_path.is_file() and tiers.marked_out_as_a_whole(collection_path):
        return True
    return None


@pytest.hookimpl(trylast=True)  # after any shuffling plugin: the order within each group is kept
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--unit`` (``make check``) keeps the unit tier only (``tests/tiers.py``). Otherwise the
    tests that start real processes (``slow``) come first: xdist's ``worksteal`` gives the first
    worker the head of the collection and lets the others steal the tails of its queue, so the
    long tests (a scheduler tick, the crash rounds, the fuzzer) start at once instead of last,
    while the other workers run the short ones beside them. (Spreading the long ones over every
    worker's share was slower: 317 s against 290 s, three workers of process tests at once on
    2 cores.)"""
    tiers.mark_servers(items)
    if config.getoption("unit"):
        tiers.keep_unit_tier(config, items)
        return
    items.sort(key=_longest_first)


# The modules whose tests take longest, longest first (figures of one `make test`, each module's
# tests summed): at the head of the first worker's queue they start at once. Further down they
# were stolen by the other workers near the end, and one test ran alone for minutes while the
# other workers waited (the crash rounds: 230 s of a 40 min run on a loaded host, started in its
# last 5 minutes).
LONGEST_FIRST = (
    "tests/processes/test_crash.py",  # one test, 230 s
    "tests/processes/test_backup_restore.py",  # 370 s, tests up to 113 s
    "tests/commands/test_doc_shell_blocks.py",  # 416 s
    "tests/fuzz/test_openapi_fuzz.py",  # 235 s
    "tests/commands/test_serve.py",  # 343 s
    "tests/cli/test_secretzero_parity.py",  # 211 s
    "tests/security/test_auth_failure_flood.py",  # 200 s
    "tests/processes/test_job_worker.py",  # 183 s
)


def _longest_first(item: pytest.Item) -> tuple[int, bool]:
    """The longest modules first, then the other processes (``slow``), then the rest."""
    module = item.nodeid.partition("::")[0]
    rank = LONGEST_FIRST.index(module) if module in LONGEST_FIRST else len(LONGEST_FIRST)
    return rank, item.get_closest_marker("slow") is None


@pytest.fixture
def undeclared_var_files(settings: Any) -> None:
    """Requests may name var files the definition does not declare (SERVICE_UNDECLARED_VAR_FILES):
    for the tests of the rules that still hold then (the folder, the shape of the file)."""
    settings.SERVICE_UNDECLARED_VAR_FILES = True

