"""Hypothesis keeps its files (constants and Unicode caches) in the temp folder, not the checkout.

Set at import, before schemathesis loads the schema: that already writes the caches.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis.configuration import set_hypothesis_home_dir

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "secretsapi-hypothesis")
