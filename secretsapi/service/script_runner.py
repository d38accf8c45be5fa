"""The script generator's runner: a command in its own session, bounded in time, its stdout the value."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from secretsapi.service.errors import GeneratorError


def run_script(config: Mapping[str, Any], cwd: Path | None) -> str:
    command = config["command"]
    args = [str(a) for a in config.get("args", [])]
    timeout = float(config.get("timeout", 30))
    words = list(command) if isinstance(command, list) else command.split()
    program = words[0] if words else "?"  # named in errors; arguments might be sensitive
    try:
        argv: str | list[str]
        if config.get("shell", False):
            base = shlex.join(command) if isinstance(command, list) else command
            argv = " ".join([base, *(shlex.quote(a) for a in args)])
        else:
            argv = [*(command if isinstance(command, list) else shlex.split(command)), *args]
        # A new session lets a timeout kill the whole process group, shell children included.
        # Running the definition's command is this generator's purpose; it is off unless
        # SERVICE_ALLOW_SCRIPTS is set, since whoever writes the definition runs code here.
        proc = subprocess.Popen(  # noqa: S603
            argv,
            shell=bool(config.get("shell", False)),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except (OSError, ValueError):
        raise GeneratorError(f"script command '{program}' could not be started") from None
    try:
        stdout, _stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise GeneratorError(f"script command '{program}' timed out after {timeout:g} s") from None
    if proc.returncode != 0:
        raise GeneratorError(f"script command '{program}' exited with status {proc.returncode}")
    try:
        value = stdout.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise GeneratorError(f"script command '{program}' printed output that is not UTF-8") from None
    if not value:
        raise GeneratorError(f"script command '{program}' printed nothing")
    return value
