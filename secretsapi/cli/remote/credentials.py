"""The keys ``secretsctl login`` stored, one per address: in the OS keyring when one is usable
(Secret Service, macOS Keychain, Windows Credential Locker), else in
``$XDG_CONFIG_HOME/secretsctl/credentials.json`` (``~/.config`` by default), mode 0600, in a 0700
folder, written atomically (a temporary file renamed over it), never read or written through a
symbolic link, and refused when anyone else may read it."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import click

KEYRING_SERVICE = "secretsctl"
FILE_NAME = "credentials.json"


class CredentialsUnsafe(click.ClickException):
    """The credentials file or its folder could be read or replaced by someone else."""


def folder() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "secretsctl"


def path() -> Path:
    return folder() / FILE_NAME


# -- the OS keyring -------------------------------------------------------------------------------


def _keyring() -> Any | None:
    """The keyring module when it has a usable backend (not the fail or null one, not an empty chain)."""
    try:
        import keyring
        from keyring.backends import chainer, fail
    except ImportError:  # pragma: no cover - a dependency, but the file store does without it
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or type(backend).__module__ == "keyring.backends.null":
        return None
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return None
    return keyring


def store(addr: str, key: str) -> str:
    """Keep ``key`` for ``addr``; where it went, for the user."""
    kr = _keyring()
    if kr is not None:
        try:
            kr.set_password(KEYRING_SERVICE, addr, key)
        except kr.errors.KeyringError:
            pass  # a locked or absent keyring daemon: the file below
        else:
            _file_remove(addr)  # a key kept in two places would outlive a logout in one
            return "the OS keyring"
    keys = _file_read()
    keys[addr] = key
    _file_write(keys)
    return str(path())


def load(addr: str) -> str | None:
    kr = _keyring()
    if kr is not None:
        with contextlib.suppress(kr.errors.KeyringError):
            found = kr.get_password(KEYRING_SERVICE, addr)
            if found:
                return str(found)
    return _file_read().get(addr)


def remove(addr: str) -> bool:
    """Forget ``addr``'s key wherever it is kept; whether there was one."""
    removed = False
    kr = _keyring()
    if kr is not None:
        with contextlib.suppress(kr.errors.KeyringError):
            if kr.get_password(KEYRING_SERVICE, addr) is not None:
                kr.delete_password(KEYRING_SERVICE, addr)
                removed = True
    return _file_remove(addr) or removed


# -- the file -------------------------------------------------------------------------------------


def _check_folder(where: Path) -> None:
    info = os.lstat(where)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise CredentialsUnsafe(f"{where} is not a plain folder (a symbolic link?): refusing to keep keys there")
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise CredentialsUnsafe(f"{where} may be written by another user (mode {stat.S_IMODE(info.st_mode):04o}): "
                                f"chmod 700 {where}")


def _file_read() -> dict[str, str]:
    where = path()
    if not where.parent.exists():
        return {}
    _check_folder(where.parent)
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise CredentialsUnsafe(f"{where}: cannot be read safely ({exc.strerror}; a symbolic link?)") from None
    with os.fdopen(fd, encoding="utf-8") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise CredentialsUnsafe(f"{where} is not a regular file")
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise CredentialsUnsafe(f"{where} may be read by others (mode {stat.S_IMODE(info.st_mode):04o}): "
                                    f"chmod 600 {where}, or remove it and log in again")
        try:
            data = json.load(handle)
        except ValueError:
            raise CredentialsUnsafe(f"{where} is not JSON: remove it and log in again") from None
    if not isinstance(data, dict):
        raise CredentialsUnsafe(f"{where} is not a JSON object: remove it and log in again")
    return {str(k): str(v) for k, v in data.items()}


def _file_write(keys: dict[str, str]) -> None:
    where = path()
    where.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _check_folder(where.parent)
    # mkstemp makes the file 0600 and opens it with O_EXCL: no one else's file, no link followed.
    fd, temporary = tempfile.mkstemp(prefix=".credentials-", dir=where.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(keys, handle, indent=2, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        # rename() replaces a symbolic link at the name; it never writes through it.
        os.replace(temporary, where)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # the rename is durable once the folder is synced
        dir_fd = os.open(where.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _file_remove(addr: str) -> bool:
    keys = _file_read()
    if addr not in keys:
        return False
    del keys[addr]
    if keys:
        _file_write(keys)
    else:
        path().unlink()
    return True
