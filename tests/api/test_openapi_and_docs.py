"""The OpenAPI schema validates, and the docs pages work with no internet."""

from __future__ import annotations

import re
import subprocess
import sys

from rest_framework.test import APIClient


def test_schema_validates_without_warnings() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


def test_schema_declares_the_api_key_scheme_and_error_body(api: APIClient) -> None:
    schema = api.get("/openapi.json").json()
    assert schema["openapi"].startswith("3.")
    scheme = schema["components"]["securitySchemes"]["ApiKeyAuth"]
    assert scheme == {"type": "apiKey", "in": "header", "name": "X-API-Key"}
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"error", "detail", "timestamp"}


def test_public_endpoints_need_no_security_in_the_schema(api: APIClient) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    for path in ("/", "/health"):
        assert paths[path]["get"].get("security", []) in ([], [{}]), path
    assert paths["/audit/logs"]["get"]["security"] == [{"ApiKeyAuth": []}]


def assets_of(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]+)"', html)


def test_docs_pages_reference_no_external_host(api: APIClient) -> None:
    for page in ("/docs", "/redoc"):
        html = api.get(page).content.decode()
        assert not re.search(r"https?://", html), page
        assert "//" not in "".join(a for a in assets_of(html) if a.startswith("//")), page


def test_docs_assets_are_served(api: APIClient) -> None:
    for page in ("/docs", "/redoc"):
        assets = [a for a in assets_of(api.get(page).content.decode()) if a.startswith("/static/")]
        assert assets, page
        for asset in assets:
            response = api.get(asset)
            assert response.status_code == 200, asset
