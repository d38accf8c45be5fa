"""Where the SecretZero-synced reference project lives.

The project is cloned beside `shared/` on the team's machines, but CI and newcomers may clone it
anywhere, so the sibling path is tried first, then the workplace's fixed location; the
`SECRETZERO_COMPAT_DIR` variable overrides both.
"""

from __future__ import annotations

import os
from pathlib import Path

_RELATIVE = Path("shared") / "compat" / "secretzero-0.14.23"


def _locate() -> Path:
    override = os.environ.get("SECRETZERO_COMPAT_DIR")
    if override:
        return Path(override)
    sibling = Path(__file__).resolve().parents[2] / _RELATIVE
    return sibling if sibling.exists() else Path("/work") / _RELATIVE


COMPAT = _locate()
