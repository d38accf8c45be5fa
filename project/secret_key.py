"""The Django SECRET_KEY: from the environment, else generated once and kept on disk."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

from deployment.private_data import check_data_folder, private_folder, tighten


def load_or_create(path: Path) -> str:
    """Return the key stored at ``path``, creating it (mode 0600) if it does not exist.

    Several gunicorn workers may start at once: the key is written to a temp file
    and hard-linked into place, so exactly one candidate wins and all read it.
    """
    # Whatever reads the key first (an app's import may, before deployment's ready()), the folder
    # must be the service's own before a key is read from it or written to it.
    check_data_folder(path.parent)
    private_folder(path.parent)
    tighten(path)
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret_key.")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)
    return _read(path)


def _read(path: Path) -> str:
    key = path.read_text().strip()
    if not key:
        raise RuntimeError(f"{path} is empty; delete it to generate a new key")
    return key
