"""``manage.py generate_api_key`` prints 32 random bytes as URL-safe base64."""

from __future__ import annotations

import base64
from io import StringIO

from django.core.management import call_command


def generate() -> str:
    out = StringIO()
    call_command("generate_api_key", stdout=out)
    return out.getvalue().strip()


def test_key_decodes_to_32_bytes() -> None:
    assert len(base64.urlsafe_b64decode(generate())) == 32


def test_keys_are_url_safe_and_differ() -> None:
    first, second = generate(), generate()
    assert first != second
    assert not set(first) - set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")
