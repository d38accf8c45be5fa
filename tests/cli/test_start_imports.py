"""What a local secretsctl command loads: not the HTTP client of ``--addr`` (requests), the web
interface (DRF, drf-spectacular, psycopg through DRF), Prometheus' client, croniter, nor Rich
where nothing is drawn. Each was part of every command's start (0.1-0.3 s of CPU together)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.factories import definition, file_secret

pytestmark = pytest.mark.slow

# The program in its own process, then which of these modules its start loaded.
LOADED = """
import sys
from secretsapi.cli.entry import main
try:
    main()
except SystemExit:
    pass
# (Django's set-up imports each installed app's package, rest_framework's and drf_spectacular's
# included: their modules are what costs.)
heavy = ("requests", "urllib3", "rest_framework.serializers", "drf_spectacular.plumbing", "psycopg",
         "prometheus_client", "croniter", "rich", "rich.progress", "django.test", "tomlkit")
sys.stderr.write("\\nLOADED " + __import__("json").dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def loaded(folder: Path, *args: str) -> list[str]:
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(folder),
           "SERVICE_DATA_DIR": str(folder / ".data")}
    done = subprocess.run([sys.executable, "-c", LOADED, *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert "LOADED " in done.stderr, done.stderr
    modules: list[str] = json.loads(done.stderr.rsplit("LOADED ", 1)[1])
    return modules


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "Secretfile.yml").write_text(yaml.safe_dump(definition(file_secret("db_password", "out/.env"))))
    return tmp_path


def test_validate_loads_no_http_client_web_interface_or_progress_bar(folder: Path) -> None:
    assert loaded(folder, "validate") == []


def test_status_loads_no_http_client_or_web_interface(folder: Path) -> None:
    # Rich's console is asked whether stderr is a terminal (it is not here): its progress bar is not loaded.
    assert set(loaded(folder, "status")) <= {"rich"}
