"""The parse store shared between processes: a second process gets the first one's parse only
while nothing the parse read has changed, and nothing taken from the environment is stored."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.definition.model import Definition
from secretsapi.service.definition.status_plan import plan_of
from secretsapi.service.loading import loader
from secretsapi.service.loading.loader import clear_definition_cache, load_definition, load_status_plan
from secretsapi.service.loading.stored import StoredParse
from tests.factories import PickledStore, file_secret, write_definition


def drop_parses(store: PickledStore) -> None:
    """Keep only what is not a whole parse: a load that still works read something else."""
    store.entries = {k: v for k, v in store.entries.items() if not isinstance(store.get(k), StoredParse)}


@pytest.fixture
def store() -> PickledStore:
    return PickledStore()


@pytest.fixture
def no_parse(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Call it to make any further parse fail the test: what loads then came from the store."""
    def forbid() -> None:
        def parse(*args: Any, **kwargs: Any) -> Definition:
            raise AssertionError("parsed again")
        monkeypatch.setattr(loader, "_load", parse)
    return forbid


def another_process(path: Path, store: PickledStore, **kwargs: Any) -> Definition:
    """A load as a new process makes it: nothing in this process's own cache."""
    clear_definition_cache()
    return load_definition(path, store=store, **kwargs)


def test_a_second_process_gets_the_first_ones_definition_without_parsing(
    tmp_path: Path, store: PickledStore, no_parse: Any,
) -> None:
    path = write_definition(tmp_path, {"secrets": [file_secret("db", rotation_period="30d")]})
    first = another_process(path, store)
    no_parse()
    second = another_process(path, store)
    assert second == first
    assert second.secret("db").rotation_days == 30


def test_a_second_process_reads_the_status_plan_without_the_definition(
    tmp_path: Path, store: PickledStore, no_parse: Any,
) -> None:
    path = write_definition(tmp_path, {"secrets": [file_secret("db", rotation_period="30d"),
                                                   file_secret("pin", one_time=True, rotation_period="7d"),
                                                   file_secret("cache_key", local=True)]})
    expected = plan_of(another_process(path, store))
    drop_parses(store)
    no_parse()
    clear_definition_cache()
    plan = load_status_plan(path, store=store)
    assert plan == expected
    assert [(s.name, s.due_days) for s in plan.secrets] == [("db", 30), ("pin", None), ("cache_key", None)]
    assert plan.local_keys == {"cache_key"}


def test_a_process_reads_a_stored_plan_once(
    tmp_path: Path, store: PickledStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A server's worker answering status requests: one read of the store, not one a request.
    path = write_definition(tmp_path, {"secrets": [file_secret("db")]})
    another_process(path, store)
    clear_definition_cache()
    first = load_status_plan(path, store=store)
    monkeypatch.setattr(store, "get", lambda key: pytest.fail("the store was read again"))
    assert load_status_plan(path, store=store) is first


def test_the_plan_of_an_edited_definition_is_derived_again(tmp_path: Path, store: PickledStore) -> None:
    path = write_definition(tmp_path, {"secrets": [file_secret("a")]})
    load_status_plan(path, store=store)
    write_definition(tmp_path, {"secrets": [file_secret("b")]})
    clear_definition_cache()
    assert [s.name for s in load_status_plan(path, store=store).secrets] == ["b"]


def test_the_plan_is_derived_again_when_a_variable_it_looked_up_is_set(
    tmp_path: Path, store: PickledStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PERIOD", raising=False)
    path = write_definition(tmp_path, {"secrets": [file_secret("a", rotation_period="${PERIOD:-30d}")]})
    clear_definition_cache()
    assert load_status_plan(path, store=store).secrets[0].due_days == 30
    monkeypatch.setenv("PERIOD", "7d")
    clear_definition_cache()
    assert load_status_plan(path, store=store).secrets[0].due_days == 7


def test_an_edited_definition_is_parsed_again(tmp_path: Path, store: PickledStore) -> None:
    path = write_definition(tmp_path, {"secrets": [file_secret("a")]})
    another_process(path, store)
    write_definition(tmp_path, {"secrets": [file_secret("b")]})
    assert [s.name for s in another_process(path, store).secrets] == ["b"]


def test_a_changed_var_file_is_parsed_again(tmp_path: Path, store: PickledStore) -> None:
    (tmp_path / "v.yml").write_text("env: dev\n")
    path = write_definition(tmp_path, {"secrets": [file_secret("a", "out/{{ var.env }}.env")]})
    another_process(path, store, var_files=["v.yml"])
    (tmp_path / "v.yml").write_text("env: prod\n")
    loaded = another_process(path, store, var_files=["v.yml"])
    assert loaded.secrets[0].targets[0].config["path"] == "out/prod.env"


def test_setting_a_variable_the_definition_names_is_seen_by_the_next_process(
    tmp_path: Path, store: PickledStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OUT_DIR", raising=False)
    path = write_definition(tmp_path, {"secrets": [file_secret("a", "${OUT_DIR:-out}/a.env")]})
    assert another_process(path, store).secrets[0].targets[0].config["path"] == "out/a.env"
    monkeypatch.setenv("OUT_DIR", "elsewhere")
    assert another_process(path, store).secrets[0].targets[0].config["path"] == "elsewhere/a.env"


def test_setting_a_secrets_override_variable_is_seen_by_the_next_process(
    tmp_path: Path, store: PickledStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DB_PASSWORD", raising=False)
    path = write_definition(tmp_path, {"secrets": [file_secret("db_password")]})
    assert another_process(path, store).secrets[0].units[0].generator.source is None
    monkeypatch.setenv("DB_PASSWORD", "from-the-environment")
    source = another_process(path, store).secrets[0].units[0].generator.source
    assert source is not None and source.override


def test_other_variables_changing_do_not_invalidate_the_stored_parse(
    tmp_path: Path, store: PickledStore, monkeypatch: pytest.MonkeyPatch, no_parse: Any,
) -> None:
    path = write_definition(tmp_path, {"secrets": [file_secret("a")]})
    first = another_process(path, store)
    monkeypatch.setenv("SOMETHING_THE_DEFINITION_NEVER_READS", "1")
    no_parse()
    assert another_process(path, store) == first


def test_a_parse_that_took_an_environment_value_is_not_stored(
    tmp_path: Path, store: PickledStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OUT_DIR", "private-folder-name")
    monkeypatch.setenv("DB_PASSWORD", "value-from-the-environment")
    path = write_definition(tmp_path, {"secrets": [file_secret("db_password", "${OUT_DIR}/a.env")]})
    loaded = another_process(path, store)
    assert loaded.secrets[0].targets[0].config["path"] == "private-folder-name/a.env"
    assert store.entries == {}


def test_request_variables_and_a_given_environment_are_never_stored(tmp_path: Path, store: PickledStore) -> None:
    path = write_definition(tmp_path, {"variables": {"env": "dev"},
                                       "secrets": [file_secret("a", "out/{{ var.env }}.env")]})
    another_process(path, store, variables={"env": "prod"})
    another_process(path, store, environ={})
    assert store.entries == {}


def test_a_definition_survives_pickling_unchanged(tmp_path: Path) -> None:
    path = write_definition(tmp_path, {
        "providers": {"vault": {"kind": "vault", "auth": {"kind": "token", "config": {"token": "t"}}}},
        "secrets": [file_secret("a", rotation_period="7d", one_time=False),
                    {"name": "b", "kind": "static", "config": {"default": "x"}, "targets": []}],
        "policies": {"rotation": {"kind": "rotation", "max_age": "90d"}},
    })
    loaded = load_definition(path, environ={})
    copy = pickle.loads(pickle.dumps(loaded))  # noqa: S301 - the test's own bytes
    assert copy == loaded
    assert copy.secret("b").units == loaded.secret("b").units
