"""SecretZero 0.14.23 itself, which the parity tests run beside us, in a virtualenv of its own.

SecretZero needs Python 3.12 (pyenv's 3.12.x, else ``python3.12`` on PATH); this project runs on
3.11, so it cannot share our virtualenv. ``make tools`` (run by ``make test``) calls ``python3
tests/secretzero_venv.py prepare`` with the system Python (standard library only): it installs
``requirements-secretzero.txt`` (every version locked with its hashes) into
``${XDG_CACHE_HOME:-~/.cache}/secretzero-0.14.23``, the folder the project's secretzero-diff tool
uses too, once, and again when the lock file changes (``SECRETZERO_VENV`` names a virtualenv made
by hand instead, used as it is). Without Python 3.12, or when the install fails, it prints one line
saying why, and the tests that need SecretZero skip saying so. Under ``TEST_REQUIRE_TOOLS=1`` (as
CI sets it) they fail instead where a Python 3.12 is there to install it with: a comparison that
could have run and did not is never a silent pass.
"""

from __future__ import annotations

import fcntl
import functools
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

VERSION = "0.14.23"
ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements-secretzero.txt"
MARKER = ".installed"  # written last: it holds the lock file's digest the venv was installed from
NOT_RUN = "the SecretZero parity tests will skip, or fail under TEST_REQUIRE_TOOLS=1"


def venv() -> Path:
    given = os.environ.get("SECRETZERO_VENV")
    if given:
        return Path(given).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / f"secretzero-{VERSION}"


def executable() -> Path:
    return venv() / "bin" / "secretzero"


def _digest() -> str:
    return hashlib.sha256(LOCK.read_bytes()).hexdigest()


def installed() -> bool:
    """Installed completely (the marker is written last), from the lock file as it is now; a
    ``SECRETZERO_VENV`` given by hand counts as installed when it has the command."""
    if os.environ.get("SECRETZERO_VENV"):
        return executable().is_file()
    marker = venv() / MARKER
    return executable().is_file() and marker.is_file() and _digest() in marker.read_text().split()


def require() -> Path:
    """The ``secretzero`` command. Without it the test skips saying why; under
    ``TEST_REQUIRE_TOOLS=1`` it fails instead, unless the machine has no Python 3.12 to install it with."""
    import pytest

    from tests.tools import skip_or_fail

    if installed():
        return executable()
    if python312() is None and not os.environ.get("SECRETZERO_VENV"):
        # Nothing here could install it (no package has Python 3.12 for this system): a skip.
        pytest.skip(f"SecretZero {VERSION} needs Python 3.12, and there is none (`pyenv install 3.12`, or set "
                    "SECRETZERO_VENV)")
    skip_or_fail(f"SecretZero {VERSION} is not installed at {venv()} (`make tools` installs it)")


def python312() -> str | None:
    """The newest pyenv 3.12.x, else ``python3.12`` on PATH: the first that runs and is 3.12 (a
    pyenv shim with no 3.12 selected is on PATH but fails)."""
    roots = [os.environ.get("PYENV_ROOT", ""), str(Path.home() / ".pyenv")]
    pyenv = sorted((path for root in roots if root
                    for path in glob.glob(os.path.join(root, "versions", "3.12*", "bin", "python3.12"))),
                   key=lambda path: [int(n) for n in re.findall(r"\d+", Path(path).parents[1].name)], reverse=True)
    on_path = shutil.which("python3.12")
    return next((path for path in [*pyenv, *([on_path] if on_path else [])] if _is_312(path)), None)


@functools.lru_cache(maxsize=8)
def _is_312(path: str) -> bool:
    try:
        done = subprocess.run([path, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
                              capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.stdout.strip() == "True"


def prepare() -> int:
    """Install when missing or stale; one line when it cannot. Exit status 0 either way: the
    tests decide whether a missing SecretZero is a skip or a failure."""
    target = venv()
    if installed():
        return 0
    if os.environ.get("SECRETZERO_VENV"):
        print(f"SECRETZERO_VENV={target} has no bin/secretzero: {NOT_RUN}", file=sys.stderr)
        return 0
    if os.environ.get("TEST_TOOLS") == "check":  # as for the system tools: only check
        print(f"SecretZero {VERSION} is not installed at {target} (TEST_TOOLS=check): {NOT_RUN}", file=sys.stderr)
        return 0
    python = python312()
    if python is None:
        print(f"no Python 3.12 (`pyenv install 3.12`): SecretZero {VERSION} is not installed and the SecretZero "
              "parity tests will skip", file=sys.stderr)
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    # Two `make test` at once: one installs, the other waits and finds it installed.
    with open(target.parent / f".secretzero-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed():
            return 0
        return _install(python, target)


def _install(python: str, target: Path) -> int:
    print(f"installing SecretZero {VERSION} into {target} with {python}", file=sys.stderr, flush=True)
    shutil.rmtree(target, ignore_errors=True)  # a half-made venv (no marker) is made again
    log = target.parent / f"secretzero-{VERSION}-install.log"
    steps = [[python, "-m", "venv", str(target)],
             [str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              "--require-hashes", "-r", str(LOCK)]]
    with open(log, "w") as out:
        for step in steps:
            try:
                code = subprocess.run(step, stdout=out, stderr=subprocess.STDOUT, timeout=900, check=False).returncode
            except (OSError, subprocess.TimeoutExpired) as error:
                out.write(f"{error}\n")
                code = 1
            if code != 0:
                shutil.rmtree(target, ignore_errors=True)
                print(f"installing SecretZero {VERSION} failed ({' '.join(step[:4])} ...; log: {log}): {NOT_RUN}",
                      file=sys.stderr)
                return 0
    (target / MARKER).write_text(f"{python}\n{_digest()}\n")
    return 0


def main(argv: list[str]) -> int:
    if argv == ["prepare"]:
        return prepare()
    if argv == ["python312"]:  # for `make lock-secretzero`
        found = python312()
        if found is None:
            sys.exit("no Python 3.12: `pyenv install 3.12`, or put python3.12 on PATH")
        print(found)
        return 0
    sys.exit("usage: python3 tests/secretzero_venv.py prepare|python312")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
