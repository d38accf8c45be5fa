"""``source:`` and the environment override: values imported (never generated), hashed and
recorded as SecretZero records them; unreadable sources fail their secret without the value."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from secretsapi.service.rotation import execute_rotation
from secretsapi.service.status import secret_status
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import definition, load_document, load_errors, write_definition

OUT = {"provider": "local", "kind": "file", "config": {"path": "out/app.json", "format": "json"}}


def _secret(name: str = "db", source: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    secret = {"name": name, "kind": "random_password", "config": {"length": 20}, "targets": [OUT], **fields}
    if source is not None:
        secret["source"] = source
    return secret


def _workspace(folder: Path, *secrets: dict[str, Any], environ: dict[str, str] | None = None,
               roots: tuple[Path, ...] | None = None) -> Workspace:
    return Workspace(definition_path=write_definition(folder, definition(*secrets)), lock_timeout=10,
                     environ=environ or {}, target_roots=roots)


def _stored(folder: Path, name: str = "db") -> str:
    value: str = json.loads((folder / "out/app.json").read_text())[name]
    return value


def _hash(ws: Workspace, name: str = "db") -> str:
    value: str = json.loads(ws.lockfile_path.read_text())["secrets"][name]["hash"]
    return value


def test_an_env_source_imports_the_variable_and_records_its_hash(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _secret(source={"kind": "env", "config": {"name": "DB_FROM"}}),
                    environ={"DB_FROM": "  imported-value \n"})
    result = sync(ws)
    assert result.sources == {"db": "env"}
    assert _stored(tmp_path) == "imported-value"  # trimmed, as SecretZero's trim default does
    assert _hash(ws) == sha256_text("imported-value")


def test_an_unset_env_source_fails_its_secret_with_a_message_naming_the_variable(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _secret(source={"kind": "env", "config": {"name": "DB_FROM"}}))
    result = sync(ws)
    assert result.secrets_failed == ["db"]
    assert result.errors[0].message == "source resolution failed: env source variable not set: DB_FROM"
    assert not (tmp_path / "out/app.json").exists()


def test_an_env_source_naming_a_service_setting_reads_it_as_unset(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _secret(source={"kind": "env", "config": {"name": "SERVICE_API_KEY"}}))
    ws = replace(ws, environ=None)  # the process's environment, as the engine reads it by default
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SERVICE_API_KEY", "the-api-key")
        result = sync(ws)
    assert result.errors[0].message == "source resolution failed: env source variable not set: SERVICE_API_KEY"
    assert not (tmp_path / "out/app.json").exists()


def test_an_unknown_source_kind_is_a_definition_error(tmp_path: Path) -> None:
    errors = load_errors(tmp_path, definition(_secret(source={"kind": "vault_pull", "config": {}})))
    assert errors == ["secrets[0].source.kind: must be one of env, file, secret_ref, provider_read"]


def test_a_file_source_reads_a_key_of_a_dotenv_file(tmp_path: Path) -> None:
    (tmp_path / "seed.env").write_text('OTHER=x\nDB_PASSWORD="from-file"\n')
    ws = _workspace(tmp_path, _secret(source={"kind": "file", "config": {"path": "seed.env", "key": "DB_PASSWORD"}}))
    assert sync(ws).sources == {"db": "file"}
    assert _stored(tmp_path) == "from-file"


def test_a_file_source_keeps_a_text_file_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "seed.txt").write_text("line\n")
    ws = _workspace(tmp_path, _secret(source={"kind": "file", "config": {"path": "seed.txt"}}))
    sync(ws)
    assert _hash(ws) == sha256_text("line\n")  # SecretZero does not strip a text source


def test_a_file_source_outside_the_target_roots_is_refused_without_its_content(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "seed.txt").write_text("not-yours")
    project = tmp_path / "project"
    project.mkdir()
    for path in (str(outside / "seed.txt"), "/proc/self/environ"):
        ws = _workspace(project, _secret(source={"kind": "file", "config": {"path": path}}))
        result = sync(ws)
        assert result.secrets_failed == ["db"]
        assert "outside the allowed target roots (SERVICE_TARGET_ROOTS)" in result.errors[0].message
        assert "not-yours" not in result.errors[0].message


def test_a_missing_file_source_fails_its_secret(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _secret(source={"kind": "file", "config": {"path": "absent.json", "key": "a"}}))
    result = sync(ws)
    assert result.errors[0].message == "source resolution failed: file source path does not exist: absent.json"


def test_a_value_from_a_source_is_reported_imported_not_generated(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _secret(source={"kind": "env", "config": {"name": "DB_FROM"}}), _secret("other"),
                    environ={"DB_FROM": "imported-value"})
    sync(ws)
    assert secret_status(ws, "db").last_change == "imported"
    assert secret_status(ws, "other").last_change == "generated"


def test_a_secret_ref_source_copies_another_secrets_value(tmp_path: Path) -> None:
    other = {**_secret("api"), "targets": [{"provider": "local", "kind": "file",
                                             "config": {"path": "out/api.json", "format": "json"}}]}
    ws = _workspace(tmp_path, other, _secret(source={"kind": "secret_ref", "config": {"secret": "api"}}))
    sync(ws)
    assert _hash(ws, "db") == _hash(ws, "api")


def test_rotating_a_sourced_secret_imports_it_again(tmp_path: Path) -> None:
    source = {"kind": "env", "config": {"name": "DB_FROM"}}
    sync(_workspace(tmp_path, _secret(source=source), environ={"DB_FROM": "first"}))
    ws = _workspace(tmp_path, _secret(source=source), environ={"DB_FROM": "second"})
    result = execute_rotation(ws, force=True)
    assert (result.rotated, result.sources) == (["db"], {"db": "env"})
    assert _stored(tmp_path) == "second"


def test_an_optional_source_that_cannot_be_read_falls_back_to_the_generator(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _secret(source={"kind": "env", "required": False, "config": {"name": "DB_FROM"}}))
    result = sync(ws)
    assert (result.secrets_generated, result.sources, result.errors) == (["db"], {}, [])
    assert len(_stored(tmp_path)) == 20


def test_a_source_changes_the_definition_hash(tmp_path: Path) -> None:
    plain = load_document(tmp_path, definition(_secret())).secrets[0].definition_hash
    sourced = load_document(tmp_path, definition(_secret(source={"kind": "env", "config": {"name": "X"}})))
    assert sourced.secrets[0].definition_hash != plain


def test_the_environment_override_supplies_a_random_secrets_value(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, _secret(), environ={"DB": "from-the-environment"})
    result = sync(ws)
    assert (result.secrets_generated, result.sources) == (["db"], {"db": "env"})
    assert _stored(tmp_path) == "from-the-environment"


def test_the_environment_override_beats_a_static_value_as_in_secretzero(tmp_path: Path) -> None:
    static = {**_secret(), "kind": "static", "config": {"value": "written"}}
    ws = _workspace(tmp_path, static, environ={"DB": "from-the-environment"})
    sync(ws)
    assert _stored(tmp_path) == "from-the-environment"


def test_the_environment_override_never_takes_a_service_setting(tmp_path: Path) -> None:
    secret = {**_secret("service_api_key"), "targets": [{"provider": "local", "kind": "file",
                                                           "config": {"path": "out/app.json", "format": "json"}}]}
    loaded = load_document(tmp_path, definition(secret), environ={"SERVICE_API_KEY": "the-api-key"})
    assert loaded.secrets[0].units[0].generator.source is None
    assert not any("SERVICE_API_KEY" in warning for warning in loaded.warnings)  # as if it were unset
    ws = _workspace(tmp_path, secret, environ={"SERVICE_API_KEY": "the-api-key"})
    sync(ws)
    assert _stored(tmp_path, "service_api_key") != "the-api-key"


def test_the_environment_override_supplies_a_template_fields_value(tmp_path: Path) -> None:
    doc = definition(
        {"name": "app", "kind": "templates.creds",
         "targets": [{"provider": "local", "kind": "file", "config": {"path": "out/app.json", "format": "json"}}]},
        templates={"creds": {"fields": {"user": {"generator": {"kind": "random_string", "config": {"length": 8}}},
                                        "token": {"generator": {"kind": "random_string", "config": {"length": 8}}}}}},
    )
    ws = Workspace(definition_path=write_definition(tmp_path, doc), lock_timeout=10, environ={"APP_TOKEN": "given"})
    result = sync(ws)
    assert result.sources == {"app": "env"}
    stored = json.loads((tmp_path / "out/app.json").read_text())
    assert stored["token"] == "given" and stored["user"] != "given"
