"""Reading secrets: the list, statuses, the admin's overview and (when enabled) a value."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from secretsapi import service
from secretsapi.actions import overview
from secretsapi.actions.auditing import audited
from secretsapi.actions.workspaces import Workspace, lane
from secretsapi.service.errors import ValueReadDisabled
from secretsapi.service.results import RevealedSecret, SecretStatus, SecretSummary


def list_secrets(ws: Workspace, *, actor: str | None) -> Sequence[SecretSummary]:
    with audited("list_secrets", "secrets", actor, lane(ws), ws=ws) as facts:
        secrets = service.list_secrets(ws)
        facts["count"] = len(secrets)
    return secrets


def secret_status(ws: Workspace, name: str, *, actor: str | None) -> SecretStatus:
    with audited("get_secret_status", f"secret:{name}", actor, lane(ws), ws=ws) as facts:
        found = service.secret_status(ws, name)
        facts["exists"] = found.exists
    return found


def secret_statuses(ws: Workspace, *, actor: str | None) -> list[SecretStatus]:
    """Every declared secret's status: one audit row naming the count and how many are missing.

    It mentions no secret: it reads the lockfile's dates, never a value, and 20,000 mentions cost
    more than the status itself (``?secret=`` finds what was done to a secret, and its own status)."""
    with audited("get_secrets_status", "secrets", actor, lane(ws), ws=ws) as facts:
        found = service.secret_statuses(ws)
        facts.update(count=len(found), missing=sum(1 for st in found if not st.exists))
    return found


def secrets_overview(ws: Workspace, *, actor: str | None) -> list[overview.SecretOverview]:
    """Every declared secret with its rotation dates and last drift result (the admin's page)."""
    with audited("read_secrets_overview", "secrets", actor, lane(ws), ws=ws) as facts:
        rows = overview.build(service.list_secrets(ws), service.secret_statuses(ws), ws.now())
        facts.update(count=len(rows), overdue=sum(1 for row in rows if row.overdue))
    return rows


def reveal_secret(ws: Workspace, name: str, *, actor: str | None) -> RevealedSecret:
    """The value endpoint: off unless SERVICE_ALLOW_VALUE_READ=true and an API key is set."""
    with audited("read_secret_value", f"secret:{name}", actor, lane(ws), ws=ws) as facts:
        if not settings.SERVICE_ALLOW_VALUE_READ:
            raise ValueReadDisabled(
                "Reading secret values is disabled; set SERVICE_ALLOW_VALUE_READ=true to enable it."
            )
        if actor is None:  # only insecure mode names nobody
            raise ValueReadDisabled("Reading secret values needs an API key: it is never served in insecure mode.")
        revealed = service.read_value(ws, name)
        facts.update(verified=revealed.verified, sources=revealed.sources)
    return revealed
