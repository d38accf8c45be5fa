"""The script generator's runner: a command in its own session, bounded in time and output, its stdout the value."""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from secretsapi.service.errors import GeneratorError

# A value is a token, a key or a certificate chain: far below this. Past it the script is killed,
# so `yes` cannot fill the worker's memory.
MAX_OUTPUT_BYTES = 1_048_576
# Taken from the server's environment, as none of them is a secret: PATH finds the programs; HOME
# is where CLIs (aws, gpg, vault) find their own configuration, which the script could read by its
# path anyway; the locale decides whether tools print UTF-8. Everything else (SERVICE_API_KEY,
# cloud credentials) reaches a script only when the definition declares it in ``env``.
INHERITED = ("PATH", "HOME", "LANG", "LC_ALL")
# After the kill, how long to wait for the killed child to be reaped.
_REAP_SECONDS = 5.0
_READ_CHUNK = 65_536


def script_environment(config: Mapping[str, Any]) -> dict[str, str]:
    """The variables a script sees: INHERITED ones that are set, then the definition's ``env``."""
    env = {name: os.environ[name] for name in INHERITED if name in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update({str(k): str(v) for k, v in (config.get("env") or {}).items()})
    return env


def run_script(config: Mapping[str, Any], cwd: Path | None, *, max_output: int = MAX_OUTPUT_BYTES) -> str:
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
        # A new session lets the deadline kill the whole process group, shell children included.
        # Running the definition's command is this generator's purpose; it is off unless
        # SERVICE_ALLOW_SCRIPTS is set, since whoever writes the definition runs code here.
        proc = subprocess.Popen(  # noqa: S603
            argv,
            shell=bool(config.get("shell", False)),
            cwd=cwd,
            env=script_environment(config),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # never shown (it may echo the value), so never buffered
            start_new_session=True,
        )
    except (OSError, ValueError):
        raise GeneratorError(f"script command '{program}' could not be started") from None
    deadline = time.monotonic() + timeout
    try:
        stdout = _read_until(proc, deadline, max_output)
        finished = stdout is not None and len(stdout) <= max_output and _exited_by(proc, deadline)
    finally:
        # The group goes, whatever happened: nothing the script started outlives its request.
        _kill_group(proc)
    if stdout is not None and len(stdout) > max_output:
        raise GeneratorError(f"script command '{program}' printed more than {max_output} bytes")
    if stdout is None or not finished:
        raise GeneratorError(f"script command '{program}' timed out after {timeout:g} s")
    if proc.returncode != 0:
        raise GeneratorError(f"script command '{program}' exited with status {proc.returncode}")
    try:
        value = stdout.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise GeneratorError(f"script command '{program}' printed output that is not UTF-8") from None
    if not value:
        raise GeneratorError(f"script command '{program}' printed nothing")
    return value


def _read_until(proc: subprocess.Popen[bytes], deadline: float, max_output: int) -> bytes | None:
    """Stdout up to its end, or one byte past ``max_output``; None at the deadline.

    The deadline holds even while a descendant that left the group (``setsid cmd &``) keeps
    the pipe open: reading stops, and the pipe is closed, regardless.
    """
    assert proc.stdout is not None  # noqa: S101 - opened with PIPE above
    out = bytearray()
    fd = proc.stdout.fileno()
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                if not selector.select(remaining):
                    continue
                chunk = os.read(fd, min(_READ_CHUNK, max_output + 1 - len(out)))
                if not chunk:
                    return bytes(out)
                out += chunk
                if len(out) > max_output:
                    return bytes(out)
    finally:
        proc.stdout.close()


def _exited_by(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    """Whether the script itself exited before the deadline, left unreaped so that its process
    group id cannot be reused before the group is killed."""
    while True:
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # reaped already (by Popen's own bookkeeping)
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=_REAP_SECONDS)
