"""ansible_vault/ansible_vault_file and git_crypt/git_crypt_file through the engine, checked with
the real tools: ansible-core's `ansible-vault` CLI and git-crypt in a real repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from secretsapi.service.drift import detect_drift
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.workspace import Workspace
from tests.factories import definition, write_definition
from tests.tools import require

ANSIBLE_VAULT = str(Path(sys.executable).with_name("ansible-vault"))
PASSWORD = "correct horse battery staple"


def _secret(name: str, provider: str, kind: str, key: str | None = None) -> dict[str, Any]:
    config = {"key": key} if key else {}
    return {"name": name, "kind": "random_password", "config": {"length": 24},
            "targets": [{"provider": provider, "kind": kind, "config": config}]}


def _with_dotenv(secret: dict[str, Any]) -> dict[str, Any]:
    """A second copy, as SecretZero's encrypted-repo example keeps one: what a repair restores from."""
    local = {"provider": "local", "kind": "file", "config": {"path": ".env.dev", "format": "dotenv"}}
    return {**secret, "targets": [local, *secret["targets"]]}


def _lock(ws: Workspace) -> dict[str, Any]:
    return dict(json.loads(ws.lockfile_path.read_text())["secrets"])


# --- Ansible Vault -------------------------------------------------------------------------

def _ansible_provider(**auth: Any) -> dict[str, Any]:
    return {"kind": "ansible_vault", "auth": {"kind": "ambient", "config": auth or
                                              {"vault_password_file": "vault-pass.txt"}},
            "config": {"vault_file": "secrets/vault.yml", "format": "yaml"}}


def _ansible_ws(folder: Path, *secrets: dict[str, Any], **auth: Any) -> Workspace:
    (folder / "vault-pass.txt").write_text(PASSWORD + "\n")
    doc = definition(*secrets, providers={"repo_ansible": _ansible_provider(**auth)})
    return Workspace(definition_path=write_definition(folder, doc), lock_timeout=10, environ={})


def _ansible(folder: Path, *args: str, password: str = PASSWORD) -> subprocess.CompletedProcess[str]:
    (folder / "cli-pass.txt").write_text(password)
    return subprocess.run([ANSIBLE_VAULT, *args, "--vault-password-file", str(folder / "cli-pass.txt")],
                          cwd=folder, capture_output=True, text=True, timeout=60, check=False)


def _view(folder: Path, password: str = PASSWORD) -> dict[str, Any]:
    done = _ansible(folder, "view", "secrets/vault.yml", password=password)
    assert done.returncode == 0, done.stderr
    return dict(yaml.safe_load(done.stdout))


def _encrypt(folder: Path, plain: str) -> None:
    """A vault file written by ansible-vault itself, as a user would."""
    path = folder / "secrets/vault.yml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(plain)
    done = _ansible(folder, "encrypt", "secrets/vault.yml")
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_a_synced_vault_file_decrypts_with_ansible_vault_view(tmp_path: Path) -> None:
    ws = _ansible_ws(tmp_path, _secret("db_password", "repo_ansible", "ansible_vault_file", "APP_DB_PASSWORD"),
                     _secret("api_token", "repo_ansible", "ansible_vault_file"))
    result = sync(ws)
    assert (result.secrets_generated, result.errors) == (["db_password", "api_token"], [])
    shown = _view(tmp_path)
    assert sorted(shown) == ["APP_DB_PASSWORD", "api_token"]
    lock = _lock(ws)
    assert lock["db_password"]["targets"] == {
        "repo_ansible/ansible_vault_file/": sha256_text(shown["APP_DB_PASSWORD"])}
    assert lock["api_token"]["hash"] == sha256_text(shown["api_token"])
    assert (tmp_path / "secrets/vault.yml").stat().st_mode & 0o777 == 0o600
    assert shown["api_token"] not in (tmp_path / "secrets/vault.yml").read_text()


@pytest.mark.slow
def test_the_vault_keeps_the_keys_it_already_held(tmp_path: Path) -> None:
    _encrypt(tmp_path, "other: keep\nlist: [1, 2]\n")
    ws = _ansible_ws(tmp_path, _secret("db_password", "repo_ansible", "ansible_vault_file"))
    sync(ws)
    shown = _view(tmp_path)
    assert (shown["other"], shown["list"], sha256_text(shown["db_password"])) == (
        "keep", [1, 2], _lock(ws)["db_password"]["hash"])


@pytest.mark.slow
def test_drift_decrypts_the_vault_and_repair_puts_the_recorded_value_back(tmp_path: Path) -> None:
    ws = _ansible_ws(tmp_path, _with_dotenv(_secret("db_password", "repo_ansible", "ansible_vault_file")))
    sync(ws)
    recorded = _view(tmp_path)["db_password"]
    assert detect_drift(ws).has_drift is False
    (tmp_path / "secrets/vault.yml").unlink()
    _encrypt(tmp_path, "db_password: changed by hand\n")
    drift = detect_drift(ws)
    assert [(d.secret, d.details["reason"], d.details["target"]) for d in drift.details] == [
        ("db_password", "value_changed", "repo_ansible/ansible_vault_file/")]
    assert sync(ws, repair=True).secrets_repaired == ["db_password"]
    assert _view(tmp_path)["db_password"] == recorded
    assert detect_drift(ws).has_drift is False


def test_a_dry_run_writes_no_vault_file(tmp_path: Path) -> None:
    ws = _ansible_ws(tmp_path, _secret("db_password", "repo_ansible", "ansible_vault_file"))
    assert sync(ws, dry_run=True).secrets_generated == ["db_password"]
    assert not (tmp_path / "secrets").exists() and not ws.lockfile_path.exists()


@pytest.mark.slow
def test_a_wrong_vault_password_fails_the_target_and_leaves_the_file(tmp_path: Path) -> None:
    ws = _ansible_ws(tmp_path, _secret("db_password", "repo_ansible", "ansible_vault_file"))
    sync(ws)
    before = (tmp_path / "secrets/vault.yml").read_bytes()
    value = _view(tmp_path)["db_password"]
    (tmp_path / "vault-pass.txt").write_text("not the password")
    result = sync(ws, force=True)
    assert [e.message for e in result.errors] == [
        "repo_ansible:secrets/vault.yml: cannot be decrypted (wrong vault password or a damaged file)"]
    assert (tmp_path / "secrets/vault.yml").read_bytes() == before
    assert value not in json.dumps([e.message for e in result.errors])


@pytest.mark.slow
def test_the_password_comes_from_the_variable_the_provider_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_VAULT_PASS", "from the environment")
    ws = _ansible_ws(tmp_path, _secret("db_password", "repo_ansible", "ansible_vault_file"),
                     vault_password_env="MY_VAULT_PASS")
    assert sync(ws).errors == []
    assert "db_password" in _view(tmp_path, password="from the environment")


@pytest.mark.slow
def test_the_password_defaults_to_ansible_vault_password(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANSIBLE_VAULT_PASSWORD", "usual variable")
    ws = _ansible_ws(tmp_path, _secret("db_password", "repo_ansible", "ansible_vault_file"),
                     vault_password_env=None)
    assert sync(ws).errors == []
    assert "db_password" in _view(tmp_path, password="usual variable")


@pytest.mark.slow
def test_without_a_password_the_target_names_where_one_may_come_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANSIBLE_VAULT_PASSWORD", raising=False)
    ws = _ansible_ws(tmp_path, _secret("db_password", "repo_ansible", "ansible_vault_file"),
                     vault_password_env="UNSET_VARIABLE_FOR_THIS_TEST")
    assert [e.message for e in sync(ws).errors] == [
        "provider 'repo_ansible': no vault password (vault_password, vault_password_file, or the "
        "variable vault_password_env names, ANSIBLE_VAULT_PASSWORD by default)"]
    assert not (tmp_path / "secrets").exists()


@pytest.mark.slow
def test_a_plain_file_where_the_vault_should_be_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets/vault.yml").write_text("not: encrypted\n")
    ws = _ansible_ws(tmp_path, _secret("db_password", "repo_ansible", "ansible_vault_file"))
    assert [e.message for e in sync(ws).errors] == [
        "repo_ansible:secrets/vault.yml: not an Ansible Vault file; nothing was written over it"]
    assert (tmp_path / "secrets/vault.yml").read_text() == "not: encrypted\n"


def test_a_vault_file_outside_the_target_roots_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    ws = _ansible_ws(project, _secret("db_password", "repo_ansible", "ansible_vault_file"))
    doc = yaml.safe_load(ws.definition_path.read_text())
    doc["providers"]["repo_ansible"]["config"]["vault_file"] = "../outside.yml"
    ws.definition_path.write_text(yaml.safe_dump(doc))
    assert [e.message for e in sync(ws).errors] == [
        "path ../outside.yml is outside the allowed target roots (SERVICE_TARGET_ROOTS)"]
    assert not (tmp_path / "outside.yml").exists()


@pytest.mark.slow
def test_a_password_file_outside_the_target_roots_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "elsewhere.txt").write_text(PASSWORD)
    ws = _ansible_ws(project, _secret("db_password", "repo_ansible", "ansible_vault_file"),
                     vault_password_file="../elsewhere.txt")
    assert [e.message for e in sync(ws).errors] == [
        "provider 'repo_ansible': vault_password_file: path ../elsewhere.txt is outside the allowed "
        "target roots (SERVICE_TARGET_ROOTS) or among the service's own files"]
    assert not (project / "secrets").exists()


@pytest.mark.slow
def test_two_aliases_naming_one_vault_file_write_it_together(tmp_path: Path) -> None:
    (tmp_path / "vault-pass.txt").write_text(PASSWORD)
    providers = {"a": _ansible_provider(), "b": _ansible_provider()}
    doc = definition(_secret("one", "a", "ansible_vault_file"), _secret("two", "b", "ansible_vault_file"),
                     providers=providers)
    ws = Workspace(definition_path=write_definition(tmp_path, doc), lock_timeout=10, environ={})
    assert sync(ws).errors == []
    assert sorted(_view(tmp_path)) == ["one", "two"]


def test_two_aliases_naming_one_vault_file_with_different_formats_are_refused(tmp_path: Path) -> None:
    (tmp_path / "vault-pass.txt").write_text(PASSWORD)
    other = _ansible_provider()
    other["config"] = {**other["config"], "format": "json"}
    doc = definition(_secret("one", "a", "ansible_vault_file"), _secret("two", "b", "ansible_vault_file"),
                     providers={"a": _ansible_provider(), "b": other})
    ws = Workspace(definition_path=write_definition(tmp_path, doc), lock_timeout=10, environ={})
    assert {e.message for e in sync(ws).errors} == {
        "providers 'a' and 'b' name one file with different settings"}
    assert not (tmp_path / "secrets").exists()


def test_without_ansible_core_the_target_names_the_package_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ansible.parsing.vault", None)  # import fails as when not installed
    ws = _ansible_ws(tmp_path, _secret("db_password", "repo_ansible", "ansible_vault_file"))
    assert [e.message for e in sync(ws).errors] == [
        "install the 'ansible-core' package to use ansible_vault/ansible_vault_file targets"]
    assert not (tmp_path / "secrets").exists()


# --- git-crypt -----------------------------------------------------------------------------

def _git(repo: Path, *args: str) -> bytes:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
    command = list(args) if args[0] == "git-crypt" else ["git", *args]
    command[0] = require(command[0])
    done = subprocess.run(command, cwd=repo, env=env,
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git-crypt repository: secrets/** encrypted when committed, unlocked (the key is local)."""
    require("git-crypt")
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "git-crypt", "init")
    (root / ".gitattributes").write_text("secrets/** filter=git-crypt diff=git-crypt\n")
    _git(root, "add", ".gitattributes")
    _git(root, "commit", "-q", "-m", "git-crypt")
    return root


def _crypt_ws(root: Path, secret_file: str, *secrets: dict[str, Any]) -> Workspace:
    provider = {"kind": "git_crypt", "auth": {"kind": "ambient"},
                "config": {"secret_file": secret_file, "format": "yaml"}}
    doc = definition(*secrets, providers={"repo_gitcrypt": provider})
    return Workspace(definition_path=write_definition(root, doc), lock_timeout=10, environ={})


@pytest.mark.slow
def test_the_work_tree_holds_the_value_and_the_commit_holds_it_encrypted(repo: Path) -> None:
    ws = _crypt_ws(repo, "secrets/app.yaml", _secret("db_password", "repo_gitcrypt", "git_crypt_file",
                                                      "APP_DB_PASSWORD"))
    assert sync(ws).errors == []
    value = yaml.safe_load((repo / "secrets/app.yaml").read_text())["APP_DB_PASSWORD"]
    assert _lock(ws)["db_password"]["targets"] == {"repo_gitcrypt/git_crypt_file/": sha256_text(value)}
    assert (repo / "secrets/app.yaml").stat().st_mode & 0o777 == 0o600
    _git(repo, "add", "secrets/app.yaml")
    _git(repo, "commit", "-q", "-m", "secrets")
    committed = _git(repo, "show", "HEAD:secrets/app.yaml")
    assert committed.startswith(b"\x00GITCRYPT\x00")
    assert value.encode() not in committed


@pytest.mark.slow
def test_other_keys_of_the_git_crypt_file_are_kept(repo: Path) -> None:
    (repo / "secrets").mkdir()
    (repo / "secrets/app.yaml").write_text("# owned by ops\nother: keep\n")
    ws = _crypt_ws(repo, "secrets/app.yaml", _secret("db_password", "repo_gitcrypt", "git_crypt_file"))
    sync(ws)
    text = (repo / "secrets/app.yaml").read_text()
    assert text.startswith("# owned by ops\nother: keep\n") and "db_password: " in text


@pytest.mark.slow
def test_a_file_gitattributes_leaves_unencrypted_is_refused_and_not_written(repo: Path) -> None:
    ws = _crypt_ws(repo, "config/app.yaml", _secret("db_password", "repo_gitcrypt", "git_crypt_file"))
    assert [e.message for e in sync(ws).errors] == [
        "repo_gitcrypt:config/app.yaml: .gitattributes does not give this file filter=git-crypt, so it "
        "would be committed unencrypted; nothing was written"]
    assert not (repo / "config").exists()


@pytest.mark.slow
def test_a_file_outside_any_git_repository_is_refused(tmp_path: Path) -> None:
    ws = _crypt_ws(tmp_path, "secrets/app.yaml", _secret("db_password", "repo_gitcrypt", "git_crypt_file"))
    assert [e.message for e in sync(ws).errors] == [
        "repo_gitcrypt:secrets/app.yaml: not inside a git repository (git-crypt encrypts only files of one)"]


@pytest.mark.slow
def test_git_crypt_drift_reads_the_work_tree_and_repair_restores_it(repo: Path) -> None:
    ws = _crypt_ws(repo, "secrets/app.yaml", _with_dotenv(_secret("db_password", "repo_gitcrypt",
                                                                   "git_crypt_file")))
    sync(ws)
    before = (repo / "secrets/app.yaml").read_text()
    (repo / "secrets/app.yaml").write_text("db_password: edited\n")
    assert [d.details["reason"] for d in detect_drift(ws).details] == ["value_changed"]
    assert sync(ws, repair=True).secrets_repaired == ["db_password"]
    assert (repo / "secrets/app.yaml").read_text() == before
    assert sync(ws, dry_run=True, force=True).secrets_generated == ["db_password"]
    assert (repo / "secrets/app.yaml").read_text() == before


@pytest.mark.slow
def test_a_locked_repository_is_reported_not_overwritten(repo: Path) -> None:
    ws = _crypt_ws(repo, "secrets/app.yaml", _secret("db_password", "repo_gitcrypt", "git_crypt_file"))
    sync(ws)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "secrets")
    _git(repo, "git-crypt", "lock")
    locked = (repo / "secrets/app.yaml").read_bytes()
    assert [e.message for e in sync(ws, force=True).errors] == [
        "repo_gitcrypt:secrets/app.yaml: the repository is locked (run 'git-crypt unlock')"]
    assert (repo / "secrets/app.yaml").read_bytes() == locked
