"""Running the documentation's shell commands as a reader would: in a fresh clone, in one shell.

- ``make_clone``: what ``git clone`` of this working tree gives (tracked and new, not ignored,
  files), committed; no ``.venv``.
- ``make_python_shim``: a ``python3`` for the Makefile's ``PYTHON`` whose ``-m venv DIR`` makes a
  venv at once, running this checkout's venv, and whose ``pip install`` finds everything installed
  (the shared venv is never touched). Everything else make does is real.
- ``run_session``: commands pasted one after the other into one ``bash`` (exports and background
  jobs carry on), each one's exit code and output kept; the shell and all it started share one
  process group, killed at the end.
- ``explain``: which commands failed, as ``page:line: command -> exit code, stderr``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.documentation import Command

ROOT = Path(__file__).resolve().parents[1]


def clean_env(python_shim: Path, **given: str) -> dict[str, str]:
    """The environment of a new shell: none of the service's settings, then exactly the ones given,
    and ``PYTHON`` (the Makefile's interpreter for ``-m venv``) set to the shim."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SERVICE_", "MAKE", "MFLAGS", "PYTEST_")) and k not in {"DATABASE_URL", "VIRTUAL_ENV"}}
    return {**env, "PYTHON": str(python_shim), **given}


def make_clone(tmp_path: Path, *, bytecode: bool = False) -> Path:
    """``bytecode``: with this checkout's compiled modules too (``make bytecode``'s, copied with
    their sources' times, so the clone's ``make bytecode`` finds them current): for a test about what
    runs after ``make serve`` has started, not about its first compile (~1.3 s of CPU)."""
    copy = tmp_path / "clone"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
            compiled = source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"
            if bytecode and source.suffix == ".py" and compiled.is_file():
                (copy / name).parent.joinpath("__pycache__").mkdir(exist_ok=True)
                shutil.copy2(compiled, (copy / name).parent / "__pycache__" / compiled.name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=copy, check=True)
    subprocess.run([*git, "add", "-A"], cwd=copy, check=True)
    subprocess.run([*git, "commit", "-qm", "clone"], cwd=copy, check=True)
    return copy


def make_python_shim(tmp_path: Path) -> Path:
    """The venv it makes has a ``python`` running this checkout's venv and the commands that
    ``pip install`` would have put beside it (schemathesis, gunicorn...), linked from that venv;
    and a ``secretsctl`` running the clone's own code, as the clone's editable install would."""
    real_bin = (ROOT / ".venv" / "bin").absolute()
    python = (
        "#!/bin/sh\n"
        'if [ "$1 $2" = "-m pip" ]; then exit 0; fi  # already installed: never touch the shared venv\n'
        f'exec "{real_bin / "python"}" "$@"\n'
    )
    shim = tmp_path / "python3"
    shim.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" != "-m venv" ]; then echo "unexpected: $*" >&2; exit 1; fi\n'
        'mkdir -p "$3/bin" && cat >"$3/bin/python" <<\'EOF\'\n' + python + "EOF\n"
        'chmod +x "$3/bin/python"\n'
        'venv=$(cd "$3" && pwd) && root=$(cd "$3/.." && pwd)\n'
        'printf \'#!/bin/sh\\nPYTHONPATH="%s${PYTHONPATH:+:$PYTHONPATH}" \''
        '\'exec "%s/bin/python" -m secretsapi.cli "$@"\\n\' "$root" "$venv" >"$3/bin/secretsctl"\n'
        'chmod +x "$3/bin/secretsctl"\n'
        f'for tool in "{real_bin}"/*; do\n'
        '  case "${tool##*/}" in python*|pip*|activate*|Activate*|secretsctl|__pycache__) ;;\n'
        '    *) ln -s "$tool" "$3/bin/" ;; esac\n'
        "done\n"
    )
    shim.chmod(0o755)
    return shim


@dataclass(frozen=True)
class Ran:
    command: Command
    rc: int  # -1: never finished
    out: str
    err: str


def run_session(commands: Sequence[Command], *, cwd: Path, env: Mapping[str, str], logs: Path,
                replace: Mapping[str, str] | None = None, deadline_s: float = 180) -> list[Ran]:
    """Each command as written (but for ``replace``'s texts, such as a port) on its own lines, in one bash."""
    logs.mkdir(parents=True, exist_ok=True)
    script = ["set +e"]
    for i, command in enumerate(commands):
        text = command.text
        for old, new in (replace or {}).items():
            text = text.replace(old, new)
        # On its own lines: a trailing comment must not swallow the closing brace.
        script += ["{", text, f"}} >{logs}/{i}.out 2>{logs}/{i}.err", f"echo $? >{logs}/{i}.rc"]
    proc = subprocess.Popen(["bash", "-c", "\n".join(script)], cwd=cwd, env=dict(env), start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=deadline_s)
    except subprocess.TimeoutExpired:
        pass  # the commands that did not finish say so (-1)
    finally:
        kill_group(proc.pid)
    ran = []
    for i, command in enumerate(commands):
        rc = logs / f"{i}.rc"
        ran.append(Ran(command, int(rc.read_text()) if rc.exists() else -1,
                       _read(logs / f"{i}.out"), _read(logs / f"{i}.err")))
    return ran


def explain(ran: Sequence[Ran]) -> str:
    """The failed commands, each with where it is written; empty when all succeeded."""
    lines = []
    for each in ran:
        if each.rc != 0:
            outcome = "did not finish in time" if each.rc == -1 else f"exited {each.rc}"
            first = each.command.text.splitlines()[0]
            lines.append(f"{each.command.where}: {first!r} {outcome}\n  stderr: {each.err[-1500:]!r}\n"
                         f"  stdout: {each.out[-500:]!r}")
    return "\n".join(lines)


def kill_group(pgid: int) -> None:
    """SIGTERM, then SIGKILL, to a process group; returns once it is gone (or after a bound)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        for _ in range(50):
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
