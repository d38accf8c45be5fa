"""Which webhook events an operation's outcome raises, and their payloads.

Built from the audit row's facts (``secretsapi.actions.audited``), keeping only names: secrets,
targets, counts and error codes. Never a value, a hash, or an error message (a store's message
may quote what it was sent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SYNCS = ("sync", "agent_sync")


def raised(action: str, success: bool, facts: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(event, data)`` for each event the outcome of ``action`` raises (most raise none)."""
    if facts.get("dry_run"):
        return []
    if action == "execute_rotation":
        return _rotation(success, facts)
    if action in SYNCS:
        generated, repaired = _names(facts.get("generated")), _names(facts.get("repaired"))
        if not (generated or repaired):
            return []
        return [("sync.completed", {"operation": action, "success": success, "generated": generated,
                                    "repaired": repaired, "failed": _names(facts.get("failed")),
                                    "errors": _errors(facts), "written_targets": _targets(facts)})]
    if action == "check_drift" and facts.get("has_drift"):
        return [("drift.detected", {"secrets": _names(facts.get("secrets_with_drift")),
                                    "findings": int(facts.get("findings") or 0)})]
    return []


def _rotation(success: bool, facts: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    rotated, failed = _names(facts.get("rotated")), _names(facts.get("failed"))
    events: list[tuple[str, dict[str, Any]]] = []
    if rotated:
        events.append(("rotation.completed", {"rotated": rotated, "written_targets": _targets(facts)}))
    if not success:
        # A failure before any secret (a definition that no longer loads) names its error code.
        events.append(("rotation.failed", {"rotated": rotated, "failed": failed, "errors": _errors(facts),
                                           "error": str(facts.get("error") or "") or None}))
    return events


def job_failed(
    job_id: str, operation: str, actor: str | None, error: str, message: str | None
) -> tuple[str, dict[str, Any]]:
    """The event of a job that ended failed: its id, operation, who asked, and why: the error's
    code and its message (written for users, never holding a value; ``GET /jobs/{id}`` has the same)."""
    return "job.failed", {"job": job_id, "operation": operation, "requested_by": actor, "error": error,
                          "message": message}


def _names(value: Any) -> list[str]:
    return [str(name) for name in value] if isinstance(value, list) else []


def _errors(facts: Mapping[str, Any]) -> list[dict[str, Any]]:
    errors = facts.get("errors")
    if not isinstance(errors, list):
        return []
    return [{"secret": e.get("secret"), "target": e.get("target")} for e in errors if isinstance(e, Mapping)]


def _targets(facts: Mapping[str, Any]) -> dict[str, list[str]]:
    written = facts.get("written_targets")
    if not isinstance(written, Mapping):
        return {}
    return {str(k): _names(v) for k, v in written.items()}
