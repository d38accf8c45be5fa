"""Settings derived from the environment: the generated secret key and CORS."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from django.test import Client, override_settings

from project.secret_key import load_or_create


def test_secret_key_is_generated_once_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "data" / "secret_key"
    first = load_or_create(path)
    assert len(first) >= 50
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_or_create(path) == first


def test_secret_key_leaves_no_temp_files(tmp_path: Path) -> None:
    load_or_create(tmp_path / "secret_key")
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]


def preflight(origin: str):  # type: ignore[no-untyped-def]
    return Client().options(
        "/sync", HTTP_ORIGIN=origin, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="x-api-key, content-type",
    )


def test_cors_allows_every_origin_with_credentials_by_default() -> None:
    response = preflight("https://dashboard.example")
    assert response["Access-Control-Allow-Origin"] == "https://dashboard.example"
    assert response["Access-Control-Allow-Credentials"] == "true"
    assert "x-api-key" in response["Access-Control-Allow-Headers"].lower()


@override_settings(CORS_ALLOW_ALL_ORIGINS=False, CORS_ALLOWED_ORIGINS=["https://ok.example"])
def test_cors_can_be_restricted_to_a_list() -> None:
    assert preflight("https://ok.example")["Access-Control-Allow-Origin"] == "https://ok.example"
    assert "Access-Control-Allow-Origin" not in preflight("https://evil.example")
