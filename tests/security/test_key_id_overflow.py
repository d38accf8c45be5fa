"""A named key's id past the database's integer range (issue 25, point 7): ``sk_9999999999999999999_...``
overflowed SQLite's integer in the lookup, a 500 with a traceback and no ``authenticate`` row.
It is a wrong key: 401, counted like any other."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apikeys import keys
from audit.models import AuditEntry

SECRET_PART = "A" * 43


@pytest.mark.parametrize("key_id", ["9999999999999999999", str(2**63)])
def test_a_key_id_past_the_integer_range_is_a_counted_401(api: APIClient, key_id: str) -> None:
    api.raise_request_exception = False  # what a real client sees
    keys.create("ci", ["read"])  # named keys exist: the id is looked up
    response = api.get("/secrets", HTTP_X_API_KEY=f"sk_{key_id}_{SECRET_PART}")
    assert response.status_code == 401, response.content
    assert response.json()["detail"] == "Invalid API key."
    row = AuditEntry.objects.get(action="authenticate")
    assert (row.details["reason"], row.details["count"]) == ("invalid", 1)

