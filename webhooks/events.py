"""Which webhook events an operation's outcome raises, and their payloads.

Built from the audit row's facts (``secretsapi.actions.auditing.audited``), keeping only names: secrets,
targets, counts, error codes, and the error messages the audit row and the API answer show
(written for users, never holding a value). Never a value or a hash.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SYNCS = ("sync", "agent_sync")
# Units a payload's ``written_targets`` lists; more are counted in ``written_targets_not_listed``.
WRITTEN_LISTED = 1000


def raised(action: str, success: bool, facts: Mapping[str, Any],
           written: Mapping[str, list[str]] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(event, data)`` for each event the outcome of ``action`` raises (most raise none).
    ``written``: lock key -> every target that took the new value (the result's, not in the row).
    ``drift.detected`` is ``drift_detected``'s: it depends on what earlier checks found."""
    if facts.get("dry_run"):
        return []
    if action == "execute_rotation":
        return _rotation(success, facts, written)
    if action in SYNCS:
        generated, repaired = _names(facts.get("generated")), _names(facts.get("repaired"))
        if not (generated or repaired):
            return []
        return [("sync.completed", {"operation": action, "success": success, "generated": generated,
                                    "repaired": repaired, "failed": _names(facts.get("failed")),
                                    "errors": _errors(facts), **_written(facts, written)})]
    return []


def drift_detected(facts: Mapping[str, Any], new: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The event of a drift check that found drift not reported before (``new``, in
    ``webhooks.drift_seen``): those secrets, and every secret drifting now."""
    if not new:
        return []
    return [("drift.detected", {"secrets": new, "drifting": _names(facts.get("secrets_with_drift")),
                                "findings": int(facts.get("findings") or 0)})]


def _rotation(success: bool, facts: Mapping[str, Any],
              written: Mapping[str, list[str]] | None) -> list[tuple[str, dict[str, Any]]]:
    rotated, failed = _names(facts.get("rotated")), _names(facts.get("failed"))
    events: list[tuple[str, dict[str, Any]]] = []
    if rotated:
        events.append(("rotation.completed", {"rotated": rotated, **_written(facts, written)}))
    if not success:
        # A failure before any secret (a definition that no longer loads) names its error code
        # and the message the caller was shown; each secret's failure names its own.
        message = facts.get("message") or (_errors(facts)[0]["message"] if _errors(facts) else None)
        events.append(("rotation.failed", {"rotated": rotated, "failed": failed, "errors": _errors(facts),
                                           "error": str(facts.get("error") or "") or None,
                                           "message": str(message) if message else None}))
    return events


def _written(facts: Mapping[str, Any], written: Mapping[str, list[str]] | None) -> dict[str, Any]:
    """``written_targets``: every unit written and its targets (the row's partial list without
    ``written``), at most WRITTEN_LISTED units, the rest counted."""
    every = _targets({"written_targets": written}) if written else _targets(facts)
    data: dict[str, Any] = {"written_targets": dict(list(every.items())[:WRITTEN_LISTED])}
    if len(every) > WRITTEN_LISTED:
        data["written_targets_not_listed"] = len(every) - WRITTEN_LISTED
    return data


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
    return [{"secret": e.get("secret"), "target": e.get("target"), "message": e.get("message")}
            for e in errors if isinstance(e, Mapping)]


def _targets(facts: Mapping[str, Any]) -> dict[str, list[str]]:
    written = facts.get("written_targets")
    if not isinstance(written, Mapping):
        return {}
    return {str(k): _names(v) for k, v in written.items()}
