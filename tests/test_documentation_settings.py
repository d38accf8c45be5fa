"""Every environment variable project/settings.py reads has its row in docs/configuration.md, and
the defaults the page states for the data folder are the settings' own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")


def read_variables() -> set[str]:
    source = (ROOT / "project" / "settings.py").read_text(encoding="utf-8")
    return set(re.findall(r"\benv_[a-z_]+\(\s*\"((?:SERVICE|DATABASE)_[A-Z0-9_]*)\"", source))


def test_every_variable_the_settings_read_has_a_row_in_the_configuration_page() -> None:
    variables = read_variables()
    assert len(variables) > 40, variables  # the pattern still finds how the settings read them
    rows = set(re.findall(r"^\| ([^|]+) \|", PAGE, re.M))
    documented = {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row)}
    assert sorted(variables - documented) == []


@pytest.mark.slow
def test_the_data_folder_is_beside_manage_py_whatever_the_working_folder_as_the_page_says(tmp_path: Path) -> None:
    assert "| `SERVICE_DATA_DIR` | `data/` in the project's folder (beside `manage.py`)" in PAGE
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "DATABASE_URL"))}
    shown = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.DATA_DIR, settings.DATABASES"
         "['default']['NAME'])"],
        cwd=tmp_path, env={**env, "DJANGO_SETTINGS_MODULE": "project.settings", "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert shown == [str(ROOT / "data"), str(ROOT / "data" / "service.sqlite3")]
