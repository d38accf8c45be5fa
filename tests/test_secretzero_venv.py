"""The SecretZero virtualenv's bookkeeping (tests/secretzero_venv.py): when it counts as installed,
when the parity tests skip and when they fail. The install itself runs in `make test`, whose parity
tests then run SecretZero."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests import secretzero_venv


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SECRETZERO_VENV", raising=False)
    monkeypatch.delenv("TEST_REQUIRE_TOOLS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def made(cache: Path, marker: str | None) -> Path:
    """A virtualenv as an install leaves it: the command, and the marker when the install finished."""
    venv = cache / f"secretzero-{secretzero_venv.VERSION}"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "secretzero").write_text("#!/bin/sh\n")
    if marker is not None:
        (venv / secretzero_venv.MARKER).write_text(marker)
    return venv


def digest() -> str:
    return hashlib.sha256(secretzero_venv.LOCK.read_bytes()).hexdigest()


def test_a_venv_installed_from_the_lock_as_it_is_counts_as_installed(cache: Path) -> None:
    made(cache, f"/usr/bin/python3.12\n{digest()}\n")
    assert secretzero_venv.installed()
    assert secretzero_venv.require() == cache / f"secretzero-{secretzero_venv.VERSION}" / "bin" / "secretzero"


@pytest.mark.parametrize("marker", [None, "/usr/bin/python3.12\n", f"/usr/bin/python3.12\n{'0' * 64}\n"],
                         ids=["unfinished", "made-by-the-diff-tool", "an-older-lock"])
def test_an_unfinished_or_stale_venv_is_not_installed(cache: Path, marker: str | None) -> None:
    made(cache, marker)
    assert not secretzero_venv.installed()


def test_without_python_3_12_the_tests_skip_even_where_tools_are_required(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secretzero_venv, "python312", lambda: None)
    monkeypatch.setenv("TEST_REQUIRE_TOOLS", "1")
    with pytest.raises(pytest.skip.Exception, match=r"needs Python 3\.12"):
        secretzero_venv.require()


def test_with_python_3_12_a_missing_install_fails_where_tools_are_required(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secretzero_venv, "python312", lambda: "/usr/bin/python3.12")
    monkeypatch.setenv("TEST_REQUIRE_TOOLS", "1")
    with pytest.raises(pytest.fail.Exception, match="TEST_REQUIRE_TOOLS=1 makes that a failure"):
        secretzero_venv.require()


def test_with_python_3_12_a_missing_install_skips_elsewhere(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secretzero_venv, "python312", lambda: "/usr/bin/python3.12")
    with pytest.raises(pytest.skip.Exception, match="is not installed"):
        secretzero_venv.require()


def test_prepare_without_python_3_12_says_why_and_makes_nothing(
        cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(secretzero_venv, "python312", lambda: None)
    assert secretzero_venv.prepare() == 0
    assert "no Python 3.12" in capsys.readouterr().err
    assert list(cache.iterdir()) == []


def test_prepare_under_test_tools_check_only_checks(
        cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(secretzero_venv, "python312", lambda: "/usr/bin/python3.12")
    monkeypatch.setenv("TEST_TOOLS", "check")
    assert secretzero_venv.prepare() == 0
    assert "TEST_TOOLS=check" in capsys.readouterr().err
    assert list(cache.iterdir()) == []


@pytest.mark.slow
def test_a_python3_12_on_path_that_does_not_run_is_no_python_3_12(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pyenv shim with no 3.12 selected is on PATH and fails: the tests skip, they do not fail."""
    shim = tmp_path / "bin" / "python3.12"
    shim.parent.mkdir()
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}:/usr/bin:/bin")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert secretzero_venv.python312() is None
