"""GET / and GET /health bodies."""

from __future__ import annotations

from datetime import datetime

from rest_framework.test import APIClient

from secretsapi import __version__


def test_root_names_the_service_version_and_docs(api: APIClient) -> None:
    body = api.get("/").json()
    assert body == {"message": body["message"], "version": __version__, "docs": "/docs"}
    assert body["message"]


def test_health_is_healthy_with_version_and_current_time(api: APIClient) -> None:
    body = api.get("/health").json()
    assert body["status"] == "healthy"
    assert body["version"] == __version__
    assert datetime.fromisoformat(body["timestamp"]).tzinfo is not None


def test_version_is_semantic() -> None:
    major, minor, patch = __version__.split(".")
    assert all(part.isdigit() for part in (major, minor, patch))
