"""The loaded model: secrets looked up by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from secretsapi.service.errors import SecretNotDefined
from tests.factories import bare_secret as secret
from tests.factories import load_document as load


def test_secret_lookup_by_name_and_select(tmp_path: Path) -> None:
    definition = load(tmp_path, {"secrets": [secret(name="a"), secret(name="b")]})
    assert definition.secret("b").name == "b"
    assert [s.name for s in definition.select(None)] == ["a", "b"]
    with pytest.raises(SecretNotDefined):
        definition.select("c")
