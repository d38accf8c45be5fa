"""Where ``secretsctl login`` keeps keys: the OS keyring when one is usable, else a 0600 file in a
0700 folder under XDG_CONFIG_HOME, written atomically, never through a link, refused when others
may read it."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import KeyringError, PasswordDeleteError

from secretsapi.cli.remote import credentials
from secretsapi.cli.remote.credentials import CredentialsUnsafe

ADDR = "https://secrets.example.com"


class MemoryKeyring(KeyringBackend):
    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.kept: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.kept.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.kept[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.kept.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


class LockedKeyring(MemoryKeyring):
    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringError("the keyring is locked")


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous, backend = keyring.get_keyring(), MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def test_without_a_keyring_the_key_goes_to_a_0600_file_in_a_0700_folder(no_keyring: None, config_home: Path) -> None:
    where = credentials.store(ADDR, "k-1")
    path = config_home / "secretsctl" / "credentials.json"
    assert where == str(path) and json.loads(path.read_text()) == {ADDR: "k-1"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_stored_key_is_loaded_for_its_address_only(no_keyring: None) -> None:
    credentials.store(ADDR, "k-1")
    assert (credentials.load(ADDR), credentials.load("https://other.example.com")) == ("k-1", None)


def test_a_file_others_may_read_is_refused(no_keyring: None, config_home: Path) -> None:
    credentials.store(ADDR, "k-1")
    (config_home / "secretsctl" / "credentials.json").chmod(0o644)
    with pytest.raises(CredentialsUnsafe, match="chmod 600"):
        credentials.load(ADDR)


def test_a_folder_others_may_write_is_refused(no_keyring: None, config_home: Path) -> None:
    credentials.store(ADDR, "k-1")
    (config_home / "secretsctl").chmod(0o777)
    with pytest.raises(CredentialsUnsafe, match="chmod 700"):
        credentials.load(ADDR)


def test_a_link_at_the_files_place_is_never_followed(no_keyring: None, config_home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    (config_home / "secretsctl").mkdir(parents=True, mode=0o700)
    (config_home / "secretsctl" / "credentials.json").symlink_to(elsewhere)
    with pytest.raises(CredentialsUnsafe):
        credentials.store(ADDR, "k-1")
    assert elsewhere.read_text() == "{}"


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(no_keyring: None, config_home: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    credentials.store(ADDR, "k-1")

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("secretsapi.cli.remote.credentials.json.dump", broken)
    with pytest.raises(OSError, match="No space"):
        credentials.store("https://b.example.com", "k-2")
    assert os.listdir(config_home / "secretsctl") == ["credentials.json"]
    assert credentials.load(ADDR) == "k-1"


def test_removing_the_last_key_removes_the_file(no_keyring: None, config_home: Path) -> None:
    credentials.store(ADDR, "k-1")
    assert credentials.remove(ADDR) is True
    assert not (config_home / "secretsctl" / "credentials.json").exists() and credentials.load(ADDR) is None


def test_removing_a_key_never_stored_says_so(no_keyring: None) -> None:
    assert credentials.remove(ADDR) is False


def test_a_usable_keyring_keeps_the_key_and_no_file_is_written(memory_keyring: MemoryKeyring,
                                                               config_home: Path) -> None:
    assert credentials.store(ADDR, "k-1") == "the OS keyring"
    assert memory_keyring.kept == {("secretsctl", ADDR): "k-1"} and not (config_home / "secretsctl").exists()
    assert credentials.load(ADDR) == "k-1"


def test_logout_removes_the_key_from_the_keyring(memory_keyring: MemoryKeyring) -> None:
    credentials.store(ADDR, "k-1")
    assert credentials.remove(ADDR) is True and memory_keyring.kept == {}


def test_a_keyring_that_refuses_falls_back_to_the_file(config_home: Path) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        assert credentials.store(ADDR, "k-1") == str(config_home / "secretsctl" / "credentials.json")
    finally:
        keyring.set_keyring(previous)
