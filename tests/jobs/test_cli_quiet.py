"""A command-line run says nothing on stderr that it was not asked to (issue 37, item 8): the task
engine's `INFO django-q Enqueued ...` followed every operation that raised a webhook event, even
with `-q`. Nothing is queued from the command line now (a worker sends the deliveries)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import file_secret
from tests.processes.live import ROOT, write_definition

pytestmark = pytest.mark.slow


def test_a_quiet_sync_that_raises_a_webhook_event_prints_nothing_on_stderr(tmp_path: Path) -> None:
    config = write_definition(tmp_path, {"version": "1.0", "secrets": [file_secret("a")]})
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_") and k != "DATABASE_URL"}
    env.update(SERVICE_DATA_DIR=str(tmp_path / "data"), SERVICE_CONFIG=str(config), SERVICE_LOG_LEVEL="INFO",
               SERVICE_WEBHOOK_ALLOW_PRIVATE="true")
    subprocess.run([sys.executable, "manage.py", "webhook", "add", "http://127.0.0.1:9/hook", "--event",
                    "sync.completed"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)
    secretsctl = Path(sys.executable).parent / "secretsctl"
    done = subprocess.run([str(secretsctl), "-q", "sync", "-f", str(config)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
