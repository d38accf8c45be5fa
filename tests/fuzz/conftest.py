"""Hypothesis keeps its files (constants and Unicode caches) in the temp folder, not the checkout.

Set at import, before schemathesis loads the schema: that already writes the caches. Through
hypothesis' own variable, read at its first write, so the unit tier (whose modules here use
neither) does not import hypothesis (0.5 s of each worker's start).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(Path(tempfile.gettempdir()) / "secretsapi-hypothesis"))
