"""Policy checks: rotation, access and compliance (SOC2, ISO27001) over definition and lockfile."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from secretsapi.service.definition.model import Definition, PolicySpec, SecretDef
from secretsapi.service.definition.periods import parse_period
from secretsapi.service.errors import LockEntryCorrupted
from secretsapi.service.results import PolicyItem, PolicyResult
from secretsapi.service.state.due import rotation_status
from secretsapi.service.state.lock_state import read_state
from secretsapi.service.state.lockfile import LockDocument
from secretsapi.service.workspace import Workspace


@dataclass(frozen=True)
class Standard:
    label: str
    max_days: int


STANDARDS = {"soc2": Standard("SOC2", 90), "iso27001": Standard("ISO27001", 365)}


def check_policies(ws: Workspace, *, fail_on_warning: bool = False) -> PolicyResult:
    """``compliant``: no errors, and with ``fail_on_warning`` no warnings; info never counts."""
    definition = ws.definition()
    doc = read_state(ws.lockfiles, definition)
    items = list(_all_items(definition, doc, ws))
    errors = [i for i in items if i.severity == "error"]
    warnings = [i for i in items if i.severity == "warning"]
    info = [i for i in items if i.severity == "info"]
    compliant = not errors and not (fail_on_warning and warnings)
    return PolicyResult(compliant, errors, warnings, info)


def _policies(definition: Definition) -> list[PolicySpec]:
    policies = [p for p in definition.policies.values() if p.enabled]
    declared = {str(p.options.get("standard", "")).lower() for p in policies if p.kind == "compliance"}
    for standard in definition.metadata.get("compliance") or []:
        key = str(standard).lower()
        if key in STANDARDS and key not in declared:
            # metadata.compliance enables a standard without a policy entry.
            policies.append(PolicySpec(key, "compliance", "error", True, {"standard": key}))
            declared.add(key)
    return policies


def _all_items(definition: Definition, doc: LockDocument, ws: Workspace) -> Iterator[PolicyItem]:
    for standard in definition.metadata.get("compliance") or []:
        if str(standard).lower() not in STANDARDS:
            yield PolicyItem("*", "metadata.compliance",
                             f"standard '{standard}' is not checked by this service (it checks soc2 and iso27001)",
                             "warning")
    policies = _policies(definition)
    if not policies:
        yield PolicyItem("*", "none", "No policies are defined or enabled.", "info")
        return
    checks = {"rotation": _rotation, "access": _access, "compliance": _compliance}
    for policy in policies:
        unchecked = _unchecked(policy)
        if unchecked is not None:
            yield PolicyItem("*", policy.name, unchecked, "warning")
            continue
        count = 0
        for secret in definition.secrets:
            for message in checks[policy.kind](policy, secret, doc, ws):
                count += 1
                yield PolicyItem(secret.name, policy.name, message, policy.severity)
        yield PolicyItem(
            "*", policy.name,
            f"{policy.kind} policy checked {len(definition.secrets)} secret(s): {count} violation(s).", "info",
        )


def _unchecked(policy: PolicySpec) -> str | None:
    """Why this service does not check ``policy`` (a kind or standard only SecretZero knows)."""
    if policy.kind not in ("rotation", "access", "compliance"):
        what = f"kind '{policy.kind}'" if policy.kind else "no kind"
        return f"policy with {what} is not checked by this service (it checks rotation, access, compliance)"
    standard = str(policy.options.get("standard", "")).lower()
    if policy.kind == "compliance" and standard not in STANDARDS:
        return f"standard '{standard}' is not checked by this service (it checks soc2 and iso27001)"
    return None


def _rotation(policy: PolicySpec, secret: SecretDef, doc: LockDocument, ws: Workspace) -> Iterator[str]:
    opts = policy.options
    if opts.get("require_rotation_period") and secret.rotation_days is None and not secret.one_time:
        yield "no rotation_period defined"
    max_age = opts.get("max_age")
    if max_age and secret.rotation_days is not None:
        limit = parse_period(str(max_age))
        if secret.rotation_days > limit:
            yield f"rotation_period {secret.rotation_period} exceeds max_age {max_age}"
    if secret.rotation_days is not None and not secret.one_time:
        status = rotation_status(doc, secret, ws.now(), ws.warning_days)
        if status.status.startswith("overdue"):
            yield f"rotation is {status.status}"


def _access(policy: PolicySpec, secret: SecretDef, doc: LockDocument, ws: Workspace) -> Iterator[str]:
    allowed = {str(t) for t in policy.options.get("allowed_targets") or []}
    denied = {str(t) for t in policy.options.get("denied_targets") or []}
    for type_ in secret.target_types:
        names = {type_, type_.split("/", 1)[-1]}  # "aws/ssm_parameter" or "ssm_parameter"
        if names & denied:
            yield f"target kind '{type_}' is denied"
        elif allowed and not names & allowed:
            yield f"target kind '{type_}' is not in allowed_targets"


def _compliance(policy: PolicySpec, secret: SecretDef, doc: LockDocument, ws: Workspace) -> Iterator[str]:
    standard = STANDARDS.get(str(policy.options.get("standard", "")).lower())
    if standard is None:
        return
    if secret.rotation_days is None:
        # A one-time secret is issued once and never rotated (rotation skips it), as the rotation
        # policy's require_rotation_period already accepts: asking it for a period is a false error.
        if not secret.one_time:
            yield f"{standard.label}: every secret must have a rotation period"
    elif secret.rotation_days > standard.max_days:
        yield f"{standard.label}: rotation period {secret.rotation_period} exceeds {standard.max_days} days"
    if not _tracked(doc, secret):
        yield f"{standard.label}: secret is not tracked in the lockfile"


def _tracked(doc: LockDocument, secret: SecretDef) -> bool:
    try:
        return all(doc.entry(unit.lock_key) is not None for unit in secret.units)
    except LockEntryCorrupted:
        return False
