"""Every definition test starts with an empty parse cache."""

from __future__ import annotations

import pytest

from secretsapi.service.loading.loader import clear_definition_cache


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    clear_definition_cache()
