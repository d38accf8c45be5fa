"""Run by test_locking in its own process, with DATABASE_URL set: the advisory lock alone.

``count PATH N``: N read-modify-writes of a counter file, each under the lockfile's advisory
lock and no file lock. ``hold PATH``: take the lock, say "held", sleep. ``try PATH SECONDS``:
say "acquired" or "timeout".
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import django


def main(mode: str, path: Path, arg: str | None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    django.setup()
    from secretsapi.database_locks import advisory_lock, lockfile_key
    from secretsapi.service.errors import LockTimeout

    key = lockfile_key(path)
    if mode == "count":
        for _ in range(int(arg or 0)):
            with advisory_lock(key, 60):
                value = int(path.read_text()) if path.exists() else 0
                time.sleep(0.001)  # widen the window a missing lock would lose updates in
                tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
                tmp.write_text(str(value + 1))
                os.replace(tmp, path)
    elif mode == "hold":
        with advisory_lock(key, 60):
            print("held", flush=True)
            time.sleep(600)
    elif mode == "try":
        try:
            with advisory_lock(key, float(arg or 0)):
                print("acquired", flush=True)
        except LockTimeout:
            print("timeout", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
