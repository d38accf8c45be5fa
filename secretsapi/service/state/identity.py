"""Who wrote the lockfile, as SecretZero records it: ``secretfile.sync_identity`` on every write
and the ``actor`` of each ``target_provenance`` record (its ``LockfileSyncIdentity`` fields,
no secret values). This service's identity is its own process: ``client`` names it, as
SecretZero's names its interface (cli, api, agent); who asked is in the audit log."""

from __future__ import annotations

import contextlib
import functools
import getpass
import os
import platform
import socket
from typing import Any

CLIENT = "secretsapi"


@functools.cache
def sync_identity() -> dict[str, Any]:
    """The fields SecretZero's ``collect_lockfile_sync_identity`` fills from the host, once per
    process (they do not change while it runs); unknown ones left out, as SecretZero drops None."""
    found: dict[str, Any] = {"client": CLIENT}
    with contextlib.suppress(KeyError, OSError):  # no name for this uid (a container's arbitrary uid)
        found["os_user"] = getpass.getuser()
    if hasattr(os, "getuid"):
        found["os_uid"] = os.getuid()
        found["os_euid"] = os.geteuid()
    with contextlib.suppress(OSError):
        found["hostname"] = socket.gethostname()
    found["platform"] = platform.platform()
    return found
