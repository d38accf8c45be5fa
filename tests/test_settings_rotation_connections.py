"""SERVICE_ROTATION_CONNECTIONS: the operator's admin connections by name, JSON or TOML, given in
the variable or in the file SERVICE_ROTATION_CONNECTIONS_FILE names; refused naming the setting,
never a URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from project.environment import env_connections

NAME = "SERVICE_ROTATION_CONNECTIONS"


@pytest.fixture(autouse=True)
def _unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NAME, raising=False)
    monkeypatch.delenv(f"{NAME}_FILE", raising=False)


def test_unset_means_no_connection() -> None:
    assert env_connections(NAME) == {}


def test_a_json_object_maps_names_to_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, '{"main": "postgresql://admin:pw@db:5432/app", "maria": "mysql://root@m/"}')
    assert env_connections(NAME) == {"main": "postgresql://admin:pw@db:5432/app", "maria": "mysql://root@m/"}


def test_a_toml_file_named_by_the_file_variable_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "connections.toml"
    path.write_text('main = "postgres://admin:pw@db/app"\nkeys = "aws://us-east-1"\n')
    monkeypatch.setenv(f"{NAME}_FILE", str(path))
    assert env_connections(NAME) == {"main": "postgres://admin:pw@db/app", "keys": "aws://us-east-1"}


def test_a_url_of_another_scheme_is_refused_naming_the_entry_never_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, '{"main": "https://admin:hunter2@db/"}')
    with pytest.raises(ImproperlyConfigured, match="connection 'main'") as caught:
        env_connections(NAME)
    assert "hunter2" not in str(caught.value)


def test_text_that_is_neither_json_nor_toml_is_refused_naming_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, "main=postgres://admin:hunter2@db/")
    with pytest.raises(ImproperlyConfigured, match=NAME) as caught:
        env_connections(NAME)
    assert "hunter2" not in str(caught.value)


def test_a_driver_suffix_as_sqlalchemy_writes_it_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, '{"main": "mysql+pymysql://root@db/"}')
    assert env_connections(NAME) == {"main": "mysql+pymysql://root@db/"}
