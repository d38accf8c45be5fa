"""Admin account changes as audit rows: who made which account, changed what, or removed it.

Written by the admin's user pages (``adminusers.admin``) and ``manage.py createsuperuser``;
rows name the account and the names of the fields changed, never a value (a password's hash
neither): ``admin_user_create``, ``admin_user_change``, ``admin_user_password``, ``admin_user_delete``.
"""

from __future__ import annotations

import json
from typing import Any

from audit.recorder import record

CREATE, CHANGE, PASSWORD, DELETE = "admin_user_create", "admin_user_change", "admin_user_password", "admin_user_delete"
ACTIONS = (CREATE, CHANGE, PASSWORD, DELETE)


def account_changed(action: str, username: str, *, actor: str, fields: list[str] | None = None,
                    via: str | None = None, **facts: Any) -> None:
    details: dict[str, Any] = {"username": username, **facts}
    if fields is not None:
        details["fields"] = fields
    if via is not None:
        details["via"] = via
    record(action=action, resource=f"admin_user:{username}", user=actor, success=True, details=details)


def changed_fields(message: Any) -> list[str]:
    """The field names of an admin change message (Django's JSON list of ``{"changed": {"fields": [...]}}``)."""
    if isinstance(message, str):
        try:
            message = json.loads(message) if message.startswith("[") else []
        except ValueError:
            return []
    names: list[str] = []
    for part in message if isinstance(message, list) else []:
        changed = part.get("changed") if isinstance(part, dict) else None
        fields = changed.get("fields") if isinstance(changed, dict) else None
        names += [str(name) for name in fields or [] if str(name) not in names]
    return names
