"""tests/tools.py: a test whose system tool is missing skips naming the Debian package (fails under
TEST_REQUIRE_TOOLS=1), and ``make test``'s first step names each missing tool on a line of its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import tools
from tests.factories import git_crypt_repository


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only git: every other tool of the list is missing (nginx's and mariadbd's /usr/sbin too)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    real_git = tools.BY_COMMAND["git"].path()
    if real_git is not None:
        (folder / "git").symlink_to(real_git)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv("TEST_REQUIRE_TOOLS", raising=False)
    monkeypatch.setitem(tools.BY_COMMAND, "nginx", tools.Tool("nginx", "nginx", "the proxy tests"))
    monkeypatch.setitem(tools.BY_COMMAND, "mariadbd", tools.Tool("mariadbd", "mariadb-server", "the mysql_user tests"))
    monkeypatch.setattr(tools, "TOOLS", tuple(tools.BY_COMMAND.values()))
    return folder


def test_a_missing_tool_skips_the_test_naming_its_package(bare_path: Path) -> None:
    with pytest.raises(pytest.skip.Exception, match=r"git-crypt is not installed \(Debian package git-crypt\): "
                                                    "needed for git_crypt/git_crypt_file targets"):
        tools.require("git-crypt")


def test_a_missing_tool_fails_the_test_when_tools_are_required(bare_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_REQUIRE_TOOLS", "1")
    with pytest.raises(pytest.fail.Exception, match=r"chromium-driver.*TEST_REQUIRE_TOOLS=1 makes that a failure"):
        tools.require("chromedriver")


def test_a_tool_found_on_path_is_its_path(bare_path: Path) -> None:
    assert tools.require("git") == str(bare_path / "git")


def test_a_git_crypt_repository_without_git_crypt_skips_before_running_anything(bare_path: Path,
                                                                                tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    with pytest.raises(pytest.skip.Exception, match="git-crypt is not installed"):
        git_crypt_repository(tmp_path / "repo")
    assert list((tmp_path / "repo").iterdir()) == []  # not even git init


def test_the_check_names_each_missing_tool_on_one_line(bare_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_DATABASE_URL", "postgres://somewhere/db")
    tools.prepare(install=False)
    lines = capsys.readouterr().err.splitlines()
    missing = [tool.command for tool in tools.TOOLS if tool.command != "git" or not (bare_path / "git").exists()]
    assert [line.split(" is not installed")[0].removeprefix("make test: ") for line in lines] == missing
    assert all(line.endswith("those tests will be skipped") for line in lines)


def test_the_check_says_the_postgresql_tests_skip_without_a_database(bare_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEST_DATABASE_URL", raising=False)
    tools.prepare(install=False)
    assert capsys.readouterr().err.splitlines()[-1] == f"make test: {tools.POSTGRES_NOTE}"


def test_every_tool_names_a_package_and_a_use() -> None:
    assert len({tool.command for tool in tools.TOOLS}) == len(tools.TOOLS)
    assert all(tool.package and tool.used_for for tool in tools.TOOLS)


@pytest.mark.slow
def test_prepare_as_root_on_debian_installs_the_missing_packages_with_apt_get(
        bare_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if os.geteuid() != 0 or not Path("/etc/debian_version").exists():
        pytest.skip("installing is what root on Debian does")
    calls = bare_path.parent / "apt-calls"
    # An apt-get that records its arguments and "installs" a command named like each package.
    (bare_path / "apt-get").write_text(
        f'#!/bin/sh\necho "$@" >> {calls}\n[ "$1" = install ] || exit 0\nshift 3\n'
        f'for p in "$@"; do printf "#!/bin/sh\\n" > "{bare_path}/$p"; /bin/chmod +x "{bare_path}/$p"; done\n')
    (bare_path / "apt-get").chmod(0o755)
    tools.prepare(install=True)
    wanted = sorted({tool.package for tool in tools.TOOLS if tool.command != "git" or not (bare_path / "git").exists()})
    assert calls.read_text().splitlines() == ["update -qq", f"install -y -qq {' '.join(wanted)}"]
    still = [line.split(" is not installed")[0].removeprefix("make test: ")
             for line in capsys.readouterr().err.splitlines() if "is not installed" in line]
    assert still == ["chromedriver", "systemd-analyze", "promtool", "mariadbd"]  # their packages are named otherwise
