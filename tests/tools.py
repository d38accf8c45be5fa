"""The system tools the test suite uses, in one list: what each is for and its Debian package.

Two uses, one list:
- the tests call ``require(name)``: the tool's path, or the test is skipped saying what is
  missing and how to install it (failed instead when ``TEST_REQUIRE_TOOLS=1``, as CI sets it, so a
  missing tool is never a silent pass);
- ``make test`` runs this file first with the system Python (standard library only):
  ``python3 tests/tools.py prepare`` installs what is missing with apt-get when it runs as root on
  Debian, else prints one line per missing tool, naming the tests that will skip.

To add a tool (a database server, a scraper), add one ``Tool`` to ``TOOLS`` and call
``require("<command>")`` where a test needs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn


@dataclass(frozen=True)
class Tool:
    command: str
    package: str  # Debian's
    used_for: str
    # Where Debian installs it outside an ordinary user's PATH (nginx: /usr/sbin).
    also: tuple[str, ...] = ()

    def path(self) -> str | None:
        found = shutil.which(self.command)
        if found:
            return found
        return next((candidate for candidate in self.also if os.access(candidate, os.X_OK)), None)


TOOLS = (
    Tool("git", "git", "the git-crypt targets' repositories and the README's scratch clone"),
    Tool("git-crypt", "git-crypt", "git_crypt/git_crypt_file targets in a real git-crypt repository"),
    Tool("curl", "curl", "the README's curl session and the docs' shell blocks"),
    Tool("openssl", "openssl", "the test certificates of the TLS proxy and its handshakes"),
    Tool("nginx", "nginx", "the reverse proxy in front of serve, and nginx -t of deploy/nginx",
         also=("/usr/sbin/nginx",)),
    Tool("chromium", "chromium", "the admin's pages in a headless browser"),
    Tool("chromedriver", "chromium-driver", "the admin's pages in a headless browser"),
    Tool("systemd-analyze", "systemd", "systemd-analyze verify of deploy/systemd's units"),
    Tool("docker-compose", "docker-compose", "docker-compose config of deploy/compose.yaml"),
    Tool("prometheus", "prometheus", "a real Prometheus scraping GET /metrics with a bearer key"),
    Tool("promtool", "prometheus", "promtool check metrics of GET /metrics' exposition"),
    # mariadb-server also installs mariadb-install-db, which makes that server's data folder.
    Tool("mariadbd", "mariadb-server", "a private MariaDB server whose users mysql_user rotates",
         also=("/usr/sbin/mariadbd",)),
)
BY_COMMAND = {tool.command: tool for tool in TOOLS}
# Not a tool on PATH: a server the PostgreSQL tests reach through TEST_DATABASE_URL.
POSTGRES_NOTE = ("PostgreSQL: TEST_DATABASE_URL is not set, so the PostgreSQL tests skip "
                 "(README, \"Tests on PostgreSQL\"; Debian package postgresql)")


def missing_reason(tool: Tool) -> str:
    return f"{tool.command} is not installed (Debian package {tool.package}): needed for {tool.used_for}"


def require(command: str) -> str:
    """The tool's path; without it the test skips naming the package (fails under TEST_REQUIRE_TOOLS=1)."""
    tool = BY_COMMAND[command]
    path = tool.path()
    if path is not None:
        return path
    skip_or_fail(missing_reason(tool))


def skip_or_fail(reason: str) -> NoReturn:
    """A tool a test needs is missing: the test skips saying why, or fails under TEST_REQUIRE_TOOLS=1."""
    import pytest

    if os.environ.get("TEST_REQUIRE_TOOLS") == "1":
        pytest.fail(f"{reason}; TEST_REQUIRE_TOOLS=1 makes that a failure")
    pytest.skip(reason)


def missing() -> list[Tool]:
    return [tool for tool in TOOLS if tool.path() is None]


def _install(tools: list[Tool]) -> bool:
    packages = sorted({tool.package for tool in tools})
    print(f"make test: installing {' '.join(packages)} (apt-get, as root)", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
        done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            print(f"make test: {' '.join(command[:2])} failed (exit {done.returncode})", file=sys.stderr)
            return False
    return True


def prepare(install: bool) -> None:
    """Install what is missing when allowed and possible; then one line per tool still missing."""
    absent = missing()
    if absent and install and os.geteuid() == 0 and shutil.which("apt-get") and Path("/etc/debian_version").exists():
        _install(absent)
        absent = missing()
    for tool in absent:
        print(f"make test: {missing_reason(tool)}; those tests will be skipped", file=sys.stderr)
    if not os.environ.get("TEST_DATABASE_URL"):
        print(f"make test: {POSTGRES_NOTE}", file=sys.stderr)


if __name__ == "__main__":
    # prepare: install when root on Debian (TEST_TOOLS=check: only check); check: only check.
    verb = sys.argv[1] if len(sys.argv) > 1 else "check"
    if verb not in ("prepare", "check"):
        sys.exit(f"usage: {sys.argv[0]} prepare|check")
    prepare(install=verb == "prepare" and os.environ.get("TEST_TOOLS") != "check")
