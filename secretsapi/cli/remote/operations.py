"""Each ``secretsctl`` subcommand against a running service: its requests, and the same report
(text, ``--format json``, exit code) the local mode prints, built by the same functions from what
the API answers. The server runs the operation and writes its audit row, under the key's name.

Flags the server cannot honour (``-f``, ``-l``: it reads its own definition and lockfile) and
subcommands the API does not serve (``clean``, ``import``) are refused with exit 1, never run
on local files instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
import yaml

from secretsapi.cli import listings
from secretsapi.cli.program import EXIT_UNREACHABLE, Lane
from secretsapi.cli.progress import steps
from secretsapi.cli.remote import auditlog
from secretsapi.cli.remote.address import Remote
from secretsapi.cli.remote.client import Client, ServerError, Unreachable, connected
from secretsapi.management.output import EXIT_ERROR, Failure
from secretsapi.management.reports import (
    Report,
    drift_report,
    merged_rotation,
    merged_rotation_check,
    merged_sync,
    policy_report,
    rotation_check_report,
    rotation_report,
    show_report,
    status_report,
    sync_report,
    validation_report,
)
from secretsapi.service.errors import SecretNotDefined
from secretsapi.service.results import (
    DriftItem,
    DriftResult,
    OperationError,
    PolicyItem,
    PolicyResult,
    RotationCheckResult,
    RotationResult,
    RotationStatus,
    SecretStatus,
    SecretSummary,
    SyncResult,
    ValidationReport,
)

NOT_SERVED = {
    "clean": "the API has no endpoint that removes lockfile entries: run `secretsctl clean` (or "
             "`manage.py clean`) where the definition and its lockfile are",
    "import": "the API has no endpoint that imports values: run `secretsctl import` where the "
              "definition and its targets are",
}


class NotServed(Failure):
    def __init__(self, detail: str) -> None:
        super().__init__("not_served_remotely", detail)


def run(remote: Remote, lane: Lane, operation: str, arguments: dict[str, Any]) -> int:
    """Run one subcommand against ``remote``, print its report (or its error); the exit code."""
    try:
        _refuse_local_flags(lane, operation)
        if operation in NOT_SERVED:
            name = operation.replace("_", " ")
            raise NotServed(f"`secretsctl {name}` cannot run against a service: {NOT_SERVED[operation]}.")
        with connected(remote) as api:
            report = OPERATIONS[operation](api, lane, **arguments)
    except ServerError as exc:
        return listings.emit_failure(Failure(exc.error, exc.detail), lane.output_format)
    except Unreachable as exc:
        return listings.emit_failure(Failure("unreachable", str(exc), returncode=EXIT_UNREACHABLE),
                                     lane.output_format)
    except Failure as exc:
        return listings.emit_failure(exc, lane.output_format)
    except SecretNotDefined as exc:
        return listings.emit_failure(Failure(exc.code, exc.message), lane.output_format)
    return listings.emit(report, lane.output_format)


def _refuse_local_flags(lane: Lane, operation: str) -> None:
    # validate sends the local file (-f) to the service's validator: that one is meant.
    if operation == "validate" and (lane.var_files or lane.environment):
        raise Failure("usage", "validate with --addr sends the definition file alone to the service: -v and -e "
                      "are not applied there (run validate without --addr to merge them)", returncode=EXIT_ERROR)
    if lane.file is not None and operation != "validate":
        raise Failure("usage", "-f/--file names a local definition: with --addr the service uses its own "
                      "(choose another with --project)", returncode=EXIT_ERROR)
    if lane.lockfile:
        raise Failure("usage", "-l/--lockfile names a local lockfile: with --addr the service uses the "
                      "definition's (or the environment's, with -e)", returncode=EXIT_ERROR)


def lane_body(lane: Lane) -> dict[str, Any]:
    """``var_files`` and ``environment`` as the POST operations take them."""
    return {"var_files": list(lane.var_files), "environment": lane.environment}


def lane_query(lane: Lane) -> dict[str, Any]:
    """The same as the GET reads take them (a repeated ``var_files``; no environment: the default)."""
    query: dict[str, Any] = {}
    if lane.var_files:
        query["var_files"] = list(lane.var_files)
    if lane.environment:
        query["environment"] = lane.environment
    return query


def _names(secret_name: str | None, secrets: Sequence[str]) -> list[str | None]:
    named = list(dict.fromkeys([*([secret_name] if secret_name else []), *secrets]))
    return list(named) if named else [None]


# -- results from their JSON ------------------------------------------------------------------


def _errors(data: Any) -> list[OperationError]:
    return [OperationError(e["secret"], e.get("target"), e["message"]) for e in data or []]


def _sync_result(data: dict[str, Any], *, dry_run: bool) -> SyncResult:
    return SyncResult(
        secrets_generated=list(data["secrets_generated"]), secrets_skipped=list(data["secrets_skipped"]),
        secrets_failed=list(data["secrets_failed"]), errors=_errors(data.get("errors")), dry_run=dry_run,
        message=data["message"], secrets_repaired=list(data.get("secrets_repaired") or []),
        sources=dict(data.get("sources") or {}), refreshed=dict(data.get("refreshed") or {}),
        written=dict(data.get("written") or {}), written_targets=dict(data.get("written_targets") or {}),
    )


def _rotation_result(data: dict[str, Any]) -> RotationResult:
    return RotationResult(rotated=list(data["rotated"]), failed=list(data["failed"]),
                          errors=_errors(data.get("errors")), message=data["message"],
                          written_targets=dict(data.get("written_targets") or {}),
                          sources=dict(data.get("sources") or {}), written=dict(data.get("written") or {}))


def _rotation_check(data: dict[str, Any]) -> RotationCheckResult:
    return RotationCheckResult(
        secrets_checked=int(data["secrets_checked"]), secrets_due=list(data["secrets_due"]),
        secrets_overdue=list(data["secrets_overdue"]),
        results=[RotationStatus(r["name"], bool(r["should_rotate"]), r["status"], r.get("due_at"))
                 for r in data["results"]],
    )


def _status(data: dict[str, Any], due_at: str | None) -> SecretStatus:
    if not data.get("exists"):
        return SecretStatus(data["name"], False)
    return SecretStatus(
        name=data["name"], exists=True, created_at=data.get("created_at"), updated_at=data.get("updated_at"),
        last_rotated=data.get("last_rotated"), rotation_count=int(data.get("rotation_count") or 0),
        targets=list(data.get("targets") or []), due_at=due_at, last_change=data.get("last_change"),
    )


def _policy_items(data: Any) -> list[PolicyItem]:
    return [PolicyItem(i["secret"], i["policy"], i["message"], i["severity"]) for i in data or []]


def _flag(value: Any) -> bool:
    """A rendered ``one_time``: YAML's true, or the strings the definition's reader takes as true."""
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1"))


# -- the subcommands ----------------------------------------------------------------------------


def sync(api: Client, lane: Lane, *, dry_run: bool, secrets: Sequence[str], force: bool, repair: bool,
         refresh: bool) -> Report:
    names = _names(None, secrets)
    body = {**lane_body(lane), "dry_run": dry_run, "force": force, "repair": repair, "refresh": refresh}
    if names == [None]:
        return sync_report(_sync_result(api.operation("/sync", body, label="sync", quiet=lane.quiet),
                                        dry_run=dry_run))
    results = []
    with steps(len(names), "sync", quiet=lane.quiet) as advance:
        for name in names:
            answer = api.operation("/sync", {**body, "secret_name": name}, label="sync", quiet=True)
            results.append(_sync_result(answer, dry_run=dry_run))
            advance()
    return sync_report(merged_sync(results))


def rotate(api: Client, lane: Lane, *, secret_name: str | None, secrets: Sequence[str], force: bool,
           dry_run: bool) -> Report:
    names = _names(secret_name, secrets)
    if dry_run:
        checks = []
        with steps(len(names), "rotate", quiet=lane.quiet) as advance:
            for name in names:
                checks.append(_rotation_check(api.operation("/rotation/check", {**lane_body(lane), "secret_name": name},
                                                            label="rotate", quiet=True)))
                advance()
        return rotation_check_report(merged_rotation_check(checks))
    body = {**lane_body(lane), "force": force}
    if names == [None]:
        return rotation_report(_rotation_result(api.operation("/rotation/execute", body, label="rotate",
                                                              quiet=lane.quiet)))
    results = []
    with steps(len(names), "rotate", quiet=lane.quiet) as advance:
        for name in names:
            results.append(_rotation_result(api.operation("/rotation/execute", {**body, "secret_name": name},
                                                          label="rotate", quiet=True)))
            advance()
    return rotation_report(merged_rotation(results))


def _declared(api: Client, lane: Lane) -> list[dict[str, Any]]:
    return list(api.get("/secrets", lane_query(lane))["secrets"])


def _due_dates(api: Client, lane: Lane) -> dict[str, str | None]:
    """When each secret falls due, as the rotation check computes it (the local status' NEXT DUE)."""
    check = api.operation("/rotation/check", lane_body(lane), label="status", quiet=True)
    return {r["name"]: r.get("due_at") for r in check["results"]}


def status(api: Client, lane: Lane, *, secrets: Sequence[str], verbose: bool) -> Report:
    named = list(dict.fromkeys(secrets))
    query = lane_query(lane)
    try:
        due = _due_dates(api, lane)
    except ServerError:
        if not named:
            raise
        due = {}  # the named secrets' statuses stand on the lockfile alone, as locally
    if named:
        with steps(len(named), "status", quiet=lane.quiet) as advance:
            answers = api.get_each([f"/secrets/{_segment(name)}/status" for name in named], query, advance=advance)
    else:  # every declared secret's, in one request (and one audit row), as the local status reads them
        answers = api.get("/status", query)["secrets"]
    statuses = [_status(answer, due.get(answer["name"])) for answer in answers]
    missing = [st.name for st in statuses if not st.exists]
    if named and missing:
        _require_declared(api, lane, missing)
    return status_report(statuses, single=bool(named) and len(named) == 1, verbose=verbose)


def _require_declared(api: Client, lane: Lane, names: Sequence[str]) -> None:
    """As the local mode: a name the lockfile lacks is "not generated" only if the definition declares it."""
    try:
        declared = [s["name"] for s in _declared(api, lane)]
    except ServerError:
        return
    for name in names:
        if name not in declared:
            raise SecretNotDefined(name, declared)


def _segment(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")


def _rendered_secrets(api: Client, lane: Lane) -> dict[str, dict[str, Any]]:
    config = _render(api, lane)
    return {str(s.get("name")): s for s in listings.items(config.get("secrets"))}


def _summaries(api: Client, lane: Lane) -> list[SecretSummary]:
    """The declared secrets as the local listing has them: ``GET /secrets``, with ``one_time`` and
    ``description`` from the rendered definition (the listing does not carry them)."""
    listed = _declared(api, lane)
    rendered = _rendered_secrets(api, lane)
    return [SecretSummary(s["name"], s["kind"], s.get("rotation_period"), list(s.get("targets") or []),
                          _flag(rendered.get(s["name"], {}).get("one_time")),
                          rendered.get(s["name"], {}).get("description"))
            for s in listed]


def show(api: Client, lane: Lane, *, secret_name: str) -> Report:
    summaries = _summaries(api, lane)
    found = [s for s in summaries if s.name == secret_name]
    if not found:
        raise SecretNotDefined(secret_name, [s.name for s in summaries])
    due = _due_dates(api, lane)
    answer = api.get(f"/secrets/{_segment(secret_name)}/status", lane_query(lane))
    return show_report(found[0], _status(answer, due.get(secret_name)))


def drift(api: Client, lane: Lane, *, secret_name: str | None) -> Report:
    data = api.operation("/drift/check", {**lane_body(lane), "secret_name": secret_name}, label="drift",
                         quiet=lane.quiet)
    return drift_report(DriftResult(
        has_drift=bool(data["has_drift"]), secrets_with_drift=list(data["secrets_with_drift"]),
        details=[DriftItem(d["secret"], d["message"], dict(d.get("details") or {})) for d in data["details"]]))


def policy(api: Client, lane: Lane, *, fail_on_warning: bool) -> Report:
    data = api.operation("/policy/check", {**lane_body(lane), "fail_on_warning": fail_on_warning}, label="policy",
                         quiet=lane.quiet)
    return policy_report(PolicyResult(bool(data["compliant"]), _policy_items(data["errors"]),
                                      _policy_items(data["warnings"]), _policy_items(data["info"])))


def validate(api: Client, lane: Lane) -> Report:
    """The local definition (``-f``, else ./Secretfile.yml) checked by the service's validator."""
    path = lane.file or Path("Secretfile.yml")
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise Failure("definition_not_found", f"{path}: cannot be read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise Failure("definition_invalid", f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(config, dict):
        raise Failure("definition_invalid", f"{path}: the definition must be a YAML mapping")
    data = api.operation("/config/validate", {"config": config}, label="validate", quiet=lane.quiet)
    return validation_report(ValidationReport(bool(data["valid"]), list(data["errors"]), list(data["warnings"])))


def _render(api: Client, lane: Lane) -> dict[str, Any]:
    config: dict[str, Any] = api.operation("/config/render", lane_body(lane), label="render", quiet=True)["config"]
    return config


def render(api: Client, lane: Lane, *, output: Path | None, as_yaml: bool) -> Report:
    return listings.rendered(_render(api, lane), output=output, as_yaml=as_yaml)


def list_secrets(api: Client, lane: Lane, *, name_filter: str | None) -> Report:
    return listings.secrets_listing(_summaries(api, lane), name_filter)


def list_targets(api: Client, lane: Lane) -> Report:
    return listings.targets_listing(_render(api, lane))


def list_providers(api: Client, lane: Lane) -> Report:
    query = {"environment": lane.environment} if lane.environment else {}
    return listings.providers_listing(api.get("/providers", query)["declared"])


def list_variables(api: Client, lane: Lane, *, name_filter: str | None) -> Report:
    return listings.variables_listing(_render(api, lane), name_filter)


OPERATIONS: dict[str, Callable[..., Report | None]] = {
    "sync": sync, "rotate": rotate, "status": status, "show": show, "drift": drift, "policy": policy,
    "validate": validate, "render": render, "list_secrets": list_secrets, "list_targets": list_targets,
    "list_providers": list_providers, "list_variables": list_variables,
    "audit": auditlog.page, "audit_follow": auditlog.follow,
}


def echo_warning(text: str) -> None:
    click.echo(f"Warning: {text}", err=True)
