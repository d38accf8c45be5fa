"""The confused deputy beyond ``provider_read`` (issue 36, point 2): a definition naming another
team's path in the operator's store, with no credential of its own, made the service read that
team's secret with the server's VAULT_TOKEN and hand it on: a template rendered it into a file the
author reads, a repair copied it into a local target, the value endpoint showed it, an import
recorded it. A value read with the server's credentials now leaves the store only from a location
the operator lists in SERVICE_PROVIDER_READ; each test's control lists it and sees the leak.

The attacker knows the other team's value hash (lockfiles are committed next to definitions), so
each test starts from a lockfile recording it, made by an import run with every read allowed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from secretsapi.service import Egress, Workspace, import_values
from tests.factories import Project, definition, target
from tests.peers.vault_server import VaultServer
from tests.service.targets.conftest import clean_sdk_env, vault  # noqa: F401 (fixtures)

SETTING = "SERVICE_PROVIDER_READ"
OTHER_TEAMS = "other-teams-database-password"
STOLEN = {"name": "stolen", "kind": "random_string",
          "targets": [target("vault", "vault_kv", path="team-b/db", key="password")]}
PROVIDERS = {"vault": {"kind": "vault"}}  # no token: the server's VAULT_TOKEN, to the server's VAULT_ADDR


@pytest.fixture
def operators_vault(vault: VaultServer, monkeypatch: pytest.MonkeyPatch) -> VaultServer:  # noqa: F811
    monkeypatch.setenv("VAULT_ADDR", vault.url)
    monkeypatch.setenv("VAULT_TOKEN", vault.token)
    vault.put("secret", "team-b/db", {"password": OTHER_TEAMS})
    return vault


def _recorded(project: Project, *secrets: dict[str, Any]) -> None:
    """The lockfile the attacker commits: the other team's hash recorded for ``stolen``."""
    project.write(definition(STOLEN, providers=PROVIDERS))
    ws = Workspace(definition_path=project.definition, egress=Egress(read_prefixes=None))
    assert [row.status for row in import_values(ws).rows] == ["imported"]
    project.write(definition(*secrets, providers=PROVIDERS))


def _sync(api: APIClient) -> Any:
    response = api.post("/sync", {}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _leaking_template(project: Project) -> dict[str, Any]:
    (project.root / "leak.j2").write_text("db={{ stolen }}\n")
    return {"name": "bait", "kind": "random_string",
            "targets": [target("local", "template", template_path="leak.j2", output_path="out/leak.txt")]}


def test_a_template_never_renders_a_value_read_with_the_servers_token(
    authed_api: APIClient, project: Project, operators_vault: VaultServer,
) -> None:
    _recorded(project, STOLEN, _leaking_template(project))

    result = _sync(authed_api)

    leak = project.root / "out/leak.txt"
    assert not leak.exists() or OTHER_TEAMS not in leak.read_text()
    assert result["errors"] and OTHER_TEAMS not in json.dumps(result)
    # The template's own error says why it has no value, not only the stolen secret's.
    assert any(error["secret"] == "bait" and SETTING in error["message"] for error in result["errors"]), result


def test_a_secret_ref_never_copies_a_value_read_with_the_servers_token_and_says_why(
    authed_api: APIClient, project: Project, operators_vault: VaultServer,
) -> None:
    copy = {"name": "copy", "kind": "random_string", "source": {"kind": "secret_ref", "config": {"secret": "stolen"}},
            "targets": [target("local", "file", path="out/copy.env")]}
    _recorded(project, STOLEN, copy)

    result = _sync(authed_api)

    copied = project.root / "out/copy.env"
    assert not copied.exists() or OTHER_TEAMS not in copied.read_text()
    assert any(error["secret"] == "copy" and SETTING in error["message"] for error in result["errors"]), result


def test_a_template_renders_it_from_a_location_the_operator_lists(
    authed_api: APIClient, project: Project, operators_vault: VaultServer, settings: Any,
) -> None:
    settings.SERVICE_PROVIDER_READ = {"vault/vault_kv": ("secret/team-b/",)}
    _recorded(project, STOLEN, _leaking_template(project))

    assert _sync(authed_api)["errors"] == []
    assert (project.root / "out/leak.txt").read_text() == f"db={OTHER_TEAMS}\n"


def _with_local_copy() -> dict[str, Any]:
    return {**STOLEN, "targets": [*STOLEN["targets"], target("local", "file", path="out/stolen.env")]}


def test_a_repair_never_copies_a_value_read_with_the_servers_token(
    authed_api: APIClient, project: Project, operators_vault: VaultServer,
) -> None:
    _recorded(project, _with_local_copy())

    result = _sync(authed_api)

    assert not (project.root / "out/stolen.env").exists()
    assert any(SETTING in error["message"] for error in result["errors"]), result["errors"]


def test_a_repair_copies_it_from_a_location_the_operator_lists(
    authed_api: APIClient, project: Project, operators_vault: VaultServer, settings: Any,
) -> None:
    settings.SERVICE_PROVIDER_READ = {"vault/vault_kv": ("secret/team-b/",)}
    _recorded(project, _with_local_copy())

    assert _sync(authed_api)["errors"] == []
    assert (project.root / "out/stolen.env").read_text() == f"stolen={OTHER_TEAMS}\n"


def test_the_value_endpoint_never_shows_a_value_read_with_the_servers_token(
    authed_api: APIClient, project: Project, operators_vault: VaultServer, settings: Any,
) -> None:
    settings.SERVICE_ALLOW_VALUE_READ = True
    _recorded(project, STOLEN)

    response = authed_api.get("/secrets/stolen")

    assert OTHER_TEAMS not in response.content.decode()
    settings.SERVICE_PROVIDER_READ = {"vault/vault_kv": ("secret/team-b/",)}  # the control
    assert OTHER_TEAMS in authed_api.get("/secrets/stolen").content.decode()


def test_an_import_never_records_a_value_read_with_the_servers_token(
    project: Project, operators_vault: VaultServer, tmp_path: Path,
) -> None:
    project.write(definition(STOLEN, providers=PROVIDERS))

    [row] = import_values(Workspace(definition_path=project.definition)).rows

    assert row.status == "error" and SETTING in row.detail
    assert not project.lockfile.exists() or "stolen" not in project.lockfile.read_text()


def test_an_import_on_the_command_line_follows_the_setting_once_set(
    db: None, project: Project, operators_vault: VaultServer, settings: Any, capsys: pytest.CaptureFixture[str],
) -> None:
    project.write(definition(STOLEN, providers=PROVIDERS))
    settings.SERVICE_PROVIDER_READ = {"vault/vault_kv": ("secret/team-a/",)}

    with pytest.raises(CommandError):  # an error row: the command fails
        call_command("import", "--json")

    assert SETTING in capsys.readouterr().out
    assert not project.lockfile.exists() or "stolen" not in project.lockfile.read_text()


def test_an_import_on_the_command_line_reads_anywhere_while_the_setting_is_unset(
    db: None, project: Project, operators_vault: VaultServer, settings: Any,
) -> None:
    settings.SERVICE_PROVIDER_READ = None  # a person's own credentials on their own files: SecretZero's
    project.write(definition(STOLEN, providers=PROVIDERS))

    call_command("import", "--json")

    assert "stolen" in project.lockfile.read_text()


# --- Writes: another team's path overwritten with the server's token -------------------------------

WRITE_SETTING = "SERVICE_PROVIDER_WRITE"


def _overwrite(project: Project, path: str) -> None:
    project.write(definition({"name": "mine", "kind": "random_string",
                              "targets": [target("vault", "vault_kv", path=path, key="password"),
                                          target("local", "file", path="out/mine.env")]},
                             providers=PROVIDERS))


def test_a_write_with_the_servers_token_outside_the_listed_locations_is_refused(
    authed_api: APIClient, project: Project, operators_vault: VaultServer, settings: Any,
) -> None:
    settings.SERVICE_PROVIDER_WRITE = {"vault/vault_kv": ("secret/team-a/",)}
    _overwrite(project, "team-b/db")

    result = _sync(authed_api)

    assert operators_vault.data("secret", "team-b/db") == {"password": OTHER_TEAMS}
    [error] = [e for e in result["errors"] if "vault" in (e.get("target") or "")]
    assert WRITE_SETTING in error["message"]


def test_a_write_under_a_listed_location_goes_through(
    authed_api: APIClient, project: Project, operators_vault: VaultServer, settings: Any,
) -> None:
    settings.SERVICE_PROVIDER_WRITE = {"vault/vault_kv": ("secret/team-a/",)}
    _overwrite(project, "team-a/db")

    assert _sync(authed_api)["errors"] == []
    assert set(operators_vault.data("secret", "team-a/db") or {}) == {"password"}


def test_writes_go_anywhere_the_addresses_allow_while_the_setting_is_unset(
    authed_api: APIClient, project: Project, operators_vault: VaultServer, settings: Any,
) -> None:
    settings.SERVICE_PROVIDER_WRITE = None  # SecretZero's behaviour: existing definitions keep working
    _overwrite(project, "team-a/db")

    assert _sync(authed_api)["errors"] == []
