"""The operations that read and check: rotation due, policies, drift, validate, render."""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.utils import timezone

from secretsapi import service
from secretsapi.actions.auditing import audited
from secretsapi.actions.workspaces import (
    Workspace,
    definition_environ,
    interpolation_limits,
    lane,
    resource_of,
    workspace,
)
from secretsapi.service.results import DriftResult, PolicyResult, RenderResult, RotationCheckResult, ValidationReport
from secretsapi.service.util.progress import Progress
from webhooks import drift_seen


def check_rotation(ws: Workspace, *, actor: str | None, secret_name: str | None = None) -> RotationCheckResult:
    request = {"secret_name": secret_name, **lane(ws)}
    with audited("check_rotation", resource_of(secret_name), actor, request, ws=ws) as facts:
        result = service.check_rotation(ws, secret_name=secret_name)
        facts.update(checked=result.secrets_checked, due=len(result.secrets_due), overdue=len(result.secrets_overdue))
    return result


def check_policy(ws: Workspace, *, actor: str | None, fail_on_warning: bool = False) -> PolicyResult:
    request = {"fail_on_warning": fail_on_warning, **lane(ws)}
    with audited("check_policy", "secrets", actor, request, ws=ws) as facts:
        result = service.check_policies(ws, fail_on_warning=fail_on_warning)
        facts.update(compliant=result.compliant, errors=len(result.errors), warnings=len(result.warnings))
    return result


def check_drift(
    ws: Workspace, *, actor: str | None, secret_name: str | None = None, progress: Progress | None = None
) -> DriftResult:
    request = {"secret_name": secret_name, **lane(ws)}
    began = timezone.now()
    with audited("check_drift", resource_of(secret_name), actor, request, ws=ws) as facts:
        result = service.detect_drift(ws, secret_name=secret_name, progress=progress)
        facts.update(has_drift=result.has_drift, secrets_with_drift=result.secrets_with_drift,
                     findings=len(result.details))
        if result.has_drift:
            facts.finding = "drift"
        facts.drift = _drift_found(ws, secret_name, result)
        # Drift is a finding, not a failure; a target the check could not read is a failure.
        unreadable = sorted({d.secret for d in result.details if d.details.get("reason") == "target_unreadable"})
        if unreadable:
            facts["unreadable"] = unreadable
            facts.succeeded = False
        if secret_name is None:  # what every secret's check found: GET /metrics' drift gauges
            facts.drift_check = {"definition": str(ws.definition_path), "environment": ws.environment, "at": began,
                                 "drifted": len(result.secrets_with_drift), "unreadable": len(unreadable)}
    return result


def _drift_found(ws: Workspace, secret_name: str | None, result: DriftResult) -> drift_seen.DriftFound:
    by_secret: dict[str, list[Any]] = {}
    for item in result.details:
        by_secret.setdefault(item.secret, []).append([item.message, item.details])
    scope = drift_seen.scope_of(str(ws.definition_path), ws.environment, ws.var_files)
    return drift_seen.DriftFound(scope, secret_name, {name: drift_seen.digest(found) for name, found in
                                                      by_secret.items() if name in result.secrets_with_drift})


def validate_config(document: Any, *, actor: str | None) -> ValidationReport:
    with audited("validate_config", "config", actor, project=_sent_project(document), in_project=True) as facts:
        # The served lockfile's values are withheld from any answer that shows a definition.
        check = functools.partial(service.validate_document, document, target_roots=settings.SERVICE_TARGET_ROOTS,
                                  limits=interpolation_limits(), marked=definition_environ())
        report: ValidationReport = service.without_recorded_values(workspace(), check, sent=document)
        report = service.with_connections_checked(report, document, settings.SERVICE_ROTATION_CONNECTIONS)
        facts.update(valid=report.valid, errors=len(report.errors), warnings=len(report.warnings))
    return report


def _sent_project(document: Any) -> str | None:
    """A sent definition's ``metadata.project``, when it is text."""
    metadata = document.get("metadata") if isinstance(document, dict) else None
    project = metadata.get("project") if isinstance(metadata, dict) else None
    return project if isinstance(project, str) else None


def validate_definition_file(ws: Workspace, *, actor: str | None) -> ValidationReport:
    request = {"file": ws.definition_path.name, **lane(ws)}
    with audited("validate_config", "config", actor, request, ws=ws) as facts:
        check = functools.partial(service.validate_workspace, ws)
        report: ValidationReport = service.without_recorded_values(ws, check)
        facts.update(valid=report.valid, errors=len(report.errors), warnings=len(report.warnings))
    return report


def render_config(ws: Workspace, *, actor: str | None, variables: dict[str, Any] | None = None) -> RenderResult:
    request = {**lane(ws), "variables": sorted(variables or {})}
    with audited("render_config", "config", actor, request, ws=ws) as facts:
        result: RenderResult = service.without_recorded_values(
            ws, functools.partial(service.render_definition, ws, variables=variables), sent=variables,
        )
        facts.update(variables_used=result.variables_used, environment_used=result.environment_used)
    return result
