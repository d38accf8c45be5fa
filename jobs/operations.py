"""The long operations a job runs: each calls its action and answers the body its endpoint does.

Named as their audit rows' actions are. ``payload`` is the request as the endpoint validated it
(JSON: it waits in the job's row); ``params`` is what the job shows of it, as the audit row
does (names and flags, never a definition's content or a variable's value). ``scope_of`` is
the URL name whose scope reading the job needs (apikeys/scopes.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from secretsapi import actions
from secretsapi.api.serializers import config as c
from secretsapi.api.serializers import operations as s

Body = dict[str, Any]

# How far a job got, in secrets: ``progress(done, total)`` (the engine's plain callable).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Operation:
    name: str
    scope_of: str
    run: Callable[[dict[str, Any], str | None, Progress], Body]
    params: Callable[[dict[str, Any]], dict[str, Any]] = dict


def _ws(p: dict[str, Any]) -> actions.Workspace:
    # A scheduled run names no environment: the definition's default one.
    return actions.workspace(var_files=p["var_files"], environment=p.get("environment"))


def _sync(p: dict[str, Any], actor: str | None, progress: Progress) -> Body:
    result = actions.sync(_ws(p), actor=actor, dry_run=p["dry_run"], force=p["force"], secret_name=p["secret_name"],
                          repair=p["repair"], refresh=p.get("refresh", False), progress=progress)
    return dict(s.SyncResultSerializer(result).data)


def _agent_sync(p: dict[str, Any], actor: str | None, progress: Progress) -> Body:
    result = actions.agent_sync(_ws(p), actor=actor, dry_run=p["dry_run"], force=p["force"],
                                secret_name=p["secret_name"], repair=p["repair"], refresh=p.get("refresh", False),
                                progress=progress)
    return {**s.SyncResultSerializer(result.sync).data, "status": result.status,
            "outcomes": s.SecretOutcomeSerializer(result.outcomes, many=True).data}


def _check_rotation(p: dict[str, Any], actor: str | None, progress: Progress) -> Body:
    result = actions.check_rotation(_ws(p), actor=actor, secret_name=p["secret_name"])
    return dict(s.RotationCheckResultSerializer(result).data)


def _execute_rotation(p: dict[str, Any], actor: str | None, progress: Progress) -> Body:
    result = actions.execute_rotation(_ws(p), actor=actor, secret_name=p["secret_name"], force=p["force"],
                                      progress=progress)
    return dict(s.RotationExecuteResultSerializer(result).data)


def _check_policy(p: dict[str, Any], actor: str | None, progress: Progress) -> Body:
    result = actions.check_policy(_ws(p), actor=actor, fail_on_warning=p["fail_on_warning"])
    return dict(s.PolicyResultSerializer(result).data)


def _check_drift(p: dict[str, Any], actor: str | None, progress: Progress) -> Body:
    result = actions.check_drift(_ws(p), actor=actor, secret_name=p["secret_name"], progress=progress)
    return dict(s.DriftResultSerializer(result).data)


def _validate_config(p: dict[str, Any], actor: str | None, progress: Progress) -> Body:
    return dict(c.ValidationResultSerializer(actions.validate_config(p["config"], actor=actor)).data)


def _render_config(p: dict[str, Any], actor: str | None, progress: Progress) -> Body:
    result = actions.render_config(_ws(p), actor=actor, variables=p["variables"])
    return dict(c.ConfigRenderResultSerializer(result).data)


def _no_content(p: dict[str, Any]) -> dict[str, Any]:
    return {}


def _variable_names(p: dict[str, Any]) -> dict[str, Any]:
    return {"var_files": p["var_files"], "variables": sorted(p["variables"])}


OPERATIONS: dict[str, Operation] = {op.name: op for op in (
    Operation("sync", "sync", _sync),
    Operation("agent_sync", "agent-sync", _agent_sync),
    Operation("check_rotation", "rotation-check", _check_rotation),
    Operation("execute_rotation", "rotation-execute", _execute_rotation),
    Operation("check_policy", "policy-check", _check_policy),
    Operation("check_drift", "drift-check", _check_drift),
    Operation("validate_config", "config-validate", _validate_config, _no_content),
    Operation("render_config", "config-render", _render_config, _variable_names),
)}
