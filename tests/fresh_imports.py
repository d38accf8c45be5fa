"""Which modules a piece of Django code loads, run in a fresh interpreter (this one has loaded
everything already), on an in-memory SQLite database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def loaded_by(code: str, modules: tuple[str, ...]) -> list[str]:
    """Those of ``modules`` loaded once Django is set up and ``code`` has run."""
    program = (f"import json, sys, django; django.setup()\n{code}\n"
               f"print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))\n")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "project.settings", "DATABASE_URL": "sqlite:///:memory:"}
    out = subprocess.run([sys.executable, "-c", program], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True, timeout=120).stdout
    found: list[str] = json.loads(out.strip().splitlines()[-1])
    return found
