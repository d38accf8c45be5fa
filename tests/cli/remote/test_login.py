"""``secretsctl login``, ``whoami`` and ``logout`` against a live service: a key is checked
before it is stored, then sent by every subcommand for that address; ``whoami`` describes it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from secretsapi.cli.remote import credentials
from tests.cli.remote.conftest import invoke
from tests.factories import named_key

pytestmark = [pytest.mark.server, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def no_env_key(served: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The service, and no key in the environment: only what login stored is sent."""
    monkeypatch.delenv("SECRETSCTL_API_KEY")
    return served


def login(addr: str, key: str, *args: str) -> Result:
    return invoke("login", "--addr", addr, "--api-key-stdin", *args, stdin=key + "\n")


def test_login_checks_the_key_and_stores_it(no_env_key: str, api_key: str) -> None:
    result = login(no_env_key, api_key)
    assert result.exit_code == 0 and result.stdout.startswith(f"Logged in to {no_env_key} as service;")
    assert credentials.load(no_env_key) == api_key


def test_a_wrong_key_is_refused_and_not_stored(no_env_key: str) -> None:
    result = login(no_env_key, "not-the-key")
    assert (result.exit_code, result.stderr) == (1, "Error: Invalid API key.\n")
    assert credentials.load(no_env_key) is None


def test_the_prompt_reads_the_key_without_the_flag(no_env_key: str, api_key: str) -> None:
    result = invoke("login", "--addr", no_env_key, stdin=api_key + "\n")
    assert result.exit_code == 0 and api_key not in result.stdout
    assert credentials.load(no_env_key) == api_key


def test_subcommands_send_the_stored_key(no_env_key: str, api_key: str, remote: Callable[..., Result]) -> None:
    assert remote("status").exit_code == 1  # no key yet: 401
    login(no_env_key, api_key)
    assert remote("sync").exit_code == 0


def test_whoami_shows_a_named_keys_name_scopes_and_projects(no_env_key: str) -> None:
    login(no_env_key, named_key("ci-deploy", "read", "write"))
    result = invoke("whoami", "--addr", no_env_key)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1:] == ["Key name:  ci-deploy", "Scopes:    read, write", "Projects:  all"]


def test_whoami_as_json_is_the_servers_answer(no_env_key: str) -> None:
    login(no_env_key, named_key("ci-deploy", "read"))
    result = invoke("--addr", no_env_key, "whoami", "--json")
    assert json.loads(result.stdout) == {"name": "ci-deploy", "scopes": ["read"], "projects": None, "insecure": False}


def test_logout_forgets_the_key(no_env_key: str, api_key: str) -> None:
    login(no_env_key, api_key)
    assert invoke("logout", "--addr", no_env_key).stdout == f"Logged out of {no_env_key}.\n"
    assert credentials.load(no_env_key) is None
    assert invoke("whoami", "--addr", no_env_key).exit_code == 1


def test_whoami_in_insecure_mode_says_so(served: str, settings: object) -> None:
    settings.SERVICE_API_KEY = None  # type: ignore[attr-defined]
    result = invoke("whoami", "--addr", served)
    assert result.exit_code == 0 and "insecure mode" in result.stdout


def test_login_needs_an_address(served: str) -> None:
    result = invoke("login", "--api-key-stdin", stdin="k\n")
    assert result.exit_code == 1 and "--addr" in result.stderr


def test_an_empty_key_is_refused(no_env_key: str) -> None:
    result = login(no_env_key, "")
    assert result.exit_code == 1 and credentials.load(no_env_key) is None


def test_the_stored_file_is_0600(no_env_key: str, api_key: str, tmp_path: Path) -> None:
    login(no_env_key, api_key)
    assert credentials.path().stat().st_mode & 0o777 == 0o600
