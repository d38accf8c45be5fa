"""The one table of scopes: each names the endpoints (URL names) a key with it may call.

The permission check, the README's table and the tests are all generated from ``SCOPES``.
"""

from __future__ import annotations

SCOPES: dict[str, tuple[str, ...]] = {
    "read": (
        "secrets", "secret-status", "secrets-status", "generators", "secret-types", "targets", "providers",
        "rotation-check", "policy-check", "policy", "drift-check", "drift", "config-validate", "config-render",
    ),
    "write": ("sync", "agent-sync", "rotation-execute"),
    # Deliveries are a record of what the service sent, like the audit log.
    "audit": ("audit-logs", "webhook-deliveries"),
    "metrics": ("metrics",),
    # Managing the webhook endpoints (as `manage.py webhook` does); their deliveries are `audit`'s.
    "webhooks": ("webhooks", "webhook"),
    # Also needs SERVICE_ALLOW_VALUE_READ=true: the scope alone reveals nothing.
    "reveal": ("secret-value",),
    # The projects the service serves; and on GET /jobs and /jobs/{id} it shows every key's jobs
    # and the scheduler's, where any other key sees only the jobs it asked for.
    "admin": ("projects", "project"),
}

ADMIN_SCOPE = "admin"

ALL_SCOPES: frozenset[str] = frozenset(SCOPES)

# Endpoints whose scope is the one of the operation each job ran: any key reaches them, and
# sees only the jobs it asked for (every job with ``admin``) of operations its scopes allow
# (secretsapi/api/views/jobs.py).
OPERATION_SCOPED: frozenset[str] = frozenset({"jobs", "job"})

# Endpoints any valid key reaches, whatever its scopes: the key's own description (GET /whoami).
ANY_KEY: frozenset[str] = frozenset({"whoami"})

# URL name -> the scope it needs; an endpoint listed in no scope is refused to every key.
REQUIRED_SCOPE: dict[str, str] = {url_name: scope for scope, names in SCOPES.items() for url_name in names}

ADMIN_REACH = "every key's jobs (and the scheduler's) at `GET /jobs` and `GET /jobs/{id}`"

README_BEGIN = "<!-- scopes table: generated from apikeys/scopes.py -->"
README_END = "<!-- end of scopes table -->"


def scopes_table(endpoints: dict[str, str]) -> str:
    """The README's table: one row per scope, its endpoints as ``endpoints`` (URL name -> text) spells them."""
    lines = ["| Scope | Endpoints |", "| --- | --- |"]
    for scope, names in SCOPES.items():
        reach = ", ".join(f"`{endpoints[name]}`" for name in names)
        if scope == ADMIN_SCOPE:
            reach = f"{reach}; {ADMIN_REACH}" if reach else ADMIN_REACH
        lines.append(f"| `{scope}` | {reach} |")
    return "\n".join(lines)
