"""Parsed definitions (and what a status reads of them and of the lockfile) shared by this
host's processes, in files of the data folder's ``cache/definitions/``.

A command line run parses the definition once per process; for 20,000 secrets that was most
of ``manage.py status``. A status reads just the plan stored beside the parse and the lockfile's
index (``service.state.status_index``), keyed on the lockfile's bytes. The loader keys each
entry on a hash of everything the parse read (``service.loading.stored``), serves an entry only
while the environment variables the parse looked up are still unset, and never stores a parse
that took an environment value or holds a value written in the definition (a static secret, a
provider's credential), so the files hold names, paths, periods and hashes, never a value.

An entry is a pickle (the engine's frozen dataclasses, as they are) behind an HMAC-SHA256 of
the entry's name, expiry and bytes, keyed on ``SECRET_KEY`` (the environment's, or the data
folder's ``secret_key``: outside this folder), checked before anything is unpickled. Django's
file cache unpickled whatever a file held: anyone who could write one ran code as the next
process that read it. A file that is not the service's own (another owner, writable by others),
not a regular file, past its expiry or not authenticated is a miss, and the definition is parsed.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import pickle
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.crypto import salted_hmac

logger = logging.getLogger("secretsapi.definition_store")

_MAGIC = b"secretsapi-store-1\n"
_MAC_BYTES = 32
_EXPIRY_BYTES = 8
_SUFFIX = ".entry"
_SALT = "secretsapi.definition_store"


class SignedFiles:
    """``service.loading.stored.DefinitionStore`` over the files of ``settings.DEFINITION_STORE``
    (``LOCATION``, ``TIMEOUT`` seconds, ``MAX_ENTRIES``), read when each call is made.

    The store only saves work: an entry that cannot be read or trusted, or a folder that cannot
    be written, is a miss and the definition is parsed as if there were no store, so every
    failure is caught and logged at debug level (a refused entry at warning: someone wrote it).
    """

    def get(self, key: str) -> object | None:
        try:
            payload = self._read(key)
            return None if payload is None else pickle.loads(payload)  # noqa: S301 - authenticated above
        except Exception:  # see the class docstring: a miss, whatever went wrong
            logger.debug("stored entry %s unreadable; parsing", key, exc_info=True)
            return None

    def has(self, key: str) -> bool:
        try:
            return self._read(key) is not None
        except Exception:  # see the class docstring
            return False

    def set(self, key: str, value: object) -> None:
        try:
            self._write(key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:  # see the class docstring
            logger.debug("entry %s not stored", key, exc_info=True)

    # -- files ---------------------------------------------------------------------------------

    @staticmethod
    def _folder() -> Path:
        return Path(str(_option("LOCATION")))

    def _path(self, key: str) -> Path:
        return self._folder() / (hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest() + _SUFFIX)

    def _read(self, key: str) -> bytes | None:
        """The entry's pickle once its file is the service's own and its MAC, name and expiry check."""
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o022:
                logger.warning("%s is not the service's own file: ignored", path)
                return None
            data = handle.read()
        head = len(_MAGIC) + _MAC_BYTES
        if not data.startswith(_MAGIC) or len(data) < head + _EXPIRY_BYTES:
            return None
        mac, signed = data[len(_MAGIC):head], data[head:]
        if not hmac.compare_digest(mac, _mac(key, signed)):
            logger.warning("%s is not an entry the service wrote: ignored", path)
            return None
        if int.from_bytes(signed[:_EXPIRY_BYTES], "big") < time.time():
            return None
        return signed[_EXPIRY_BYTES:]

    def _write(self, key: str, payload: bytes) -> None:
        folder = self._folder()
        _private_folders(folder)
        expiry = int(time.time() + float(_option("TIMEOUT"))).to_bytes(_EXPIRY_BYTES, "big")
        signed = expiry + payload
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".entry.", suffix=".tmp")  # 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(_MAGIC + _mac(key, signed) + signed)
            os.replace(temp, self._path(key))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        self._cull(folder)

    @staticmethod
    def _cull(folder: Path) -> None:
        """The oldest entries beyond MAX_ENTRIES removed (by modification time). Counted by name
        first: each entry's stat only when some must go (at every write, a full folder's stats
        were most of a write's cost)."""
        kept = int(_option("MAX_ENTRIES"))
        with os.scandir(folder) as scan:
            found = [entry for entry in scan if entry.name.endswith(_SUFFIX)]
        if len(found) <= kept:
            return
        entries = []
        for entry in found:
            with contextlib.suppress(OSError):  # removed meanwhile by another process's cull
                entries.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.path))
        for _, path in sorted(entries)[: max(0, len(entries) - kept)]:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _option(name: str) -> Any:
    options: dict[str, Any] = settings.DEFINITION_STORE
    return options[name]


def _mac(key: str, signed: bytes) -> bytes:
    """HMAC-SHA256 (keyed on SECRET_KEY, for this store alone) of the entry's name and its bytes."""
    name = key.encode("utf-8", "surrogatepass")
    return salted_hmac(_SALT, len(name).to_bytes(8, "big") + name + signed, algorithm="sha256").digest()


STORE = SignedFiles()


def _private_folders(folder: Path) -> None:
    """``folder`` and each missing folder above it made 0700 (``mkdir(parents=True)`` would make
    the ones above with the umask's mode: ``cache/`` 0755 in the private data folder)."""
    missing = []
    for level in (folder, *folder.parents):
        if level.exists():
            break
        missing.append(level)
    for level in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it first
            level.mkdir(mode=0o700)

