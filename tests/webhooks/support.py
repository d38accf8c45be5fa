"""Helpers of the webhook tests: an endpoint row, and the README's verification snippet."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.documentation import documentation
from webhooks.models import EVENTS, Endpoint

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec-test-3c1f0e9a7b2d4c6e"


def endpoint(url: str, *events: str, secret: str = SECRET) -> Endpoint:
    return Endpoint.objects.create(url=url, events=list(events or EVENTS), secret=secret)


def readme_verifier() -> Callable[[str, str, bytes], bool]:
    """``verify_webhook`` exactly as the README prints it."""
    text = documentation()
    block = re.search(r"<!-- webhook verification snippet -->\n```python\n(.*?)```\n<!-- end of webhook", text, re.S)
    assert block is not None
    namespace: dict[str, Any] = {}
    exec(block.group(1), namespace)  # noqa: S102 - the README's own snippet, tested verbatim
    verify: Callable[[str, str, bytes], bool] = namespace["verify_webhook"]
    return verify
