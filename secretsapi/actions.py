"""The bridge between interfaces and the engine: settings + service call + one audit row.

Views and management commands call these functions, never the service directly, so the
API and the CLI behave and audit identically. ``actor`` names who acted in the audit row.
The long operations run here too, in a job worker (``secretsapi.operations.run_job``) or a management
command's; their ``progress`` (``service.progress``) is the caller's to give.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from audit import activity
from audit import export as audit_export
from audit import origin as audit_origin
from audit.models import AuditEntry, AuditMention
from audit.recorder import begin, finish, fit, fit_name, keep_unwritten, mention_ahead, record
from audit.write_gate import audited_transaction
from metrics import tally
from projects import current as current_project
from projects.errors import EnvironmentRefused
from secretsapi import database_errors, database_locks, definition_store, overview, service
from secretsapi.pages import Page
from secretsapi.service.definition.model import Definition
from secretsapi.service.definition.readable_environ import ReadableEnviron
from secretsapi.service.errors import (
    DefinitionInvalid,
    DefinitionNotFound,
    ServiceError,
    ValueReadDisabled,
)
from secretsapi.service.loading.loader import clear_definition_cache
from secretsapi.service.results import (
    AgentSyncResult,
    CleanResult,
    DriftResult,
    ImportResult,
    PolicyResult,
    RenderResult,
    RevealedSecret,
    RotationCheckResult,
    RotationResult,
    SecretStatus,
    SecretSummary,
    SyncResult,
    ValidationReport,
)
from secretsapi.service.state.lockfile_io import clear_lockfile_cache
from secretsapi.service.state.locks import ExtraLock
from secretsapi.service.util.progress import Progress
from secretsapi.service.workspace import Workspace as Workspace  # interfaces name it as actions.Workspace
from webhooks import drift_seen, outbox
from webhooks import events as webhook_events

# A failed row's ``message`` is clipped (a definition's errors can run long).
MESSAGE_MAX = 1000


class Facts(dict[str, Any]):
    """What ``audited`` yields: the row's details, and ``succeeded``, the operation's outcome.

    An operation whose result reports a failure (a secret that failed, an error) sets
    ``succeeded = False``: its row then says ``success: false``, with what did succeed in the
    details beside what failed.
    """

    succeeded: bool = True
    # A finding that is no failure, recorded as the row's outcome (``drift``) when it succeeded.
    finding: str | None = None
    # Not in the row (it can be long): lock key -> every target written, for the webhook payloads.
    written: dict[str, list[str]] | None = None
    # A drift check's findings, for ``drift.detected`` once per new drift (``webhooks.drift_seen``).
    drift: drift_seen.DriftFound | None = None


# Told the id of an operation's audit row as soon as it exists (``begin``): a job keeps it, so
# that a job whose worker died completes that row rather than writing a second one.
audit_row_started: ContextVar[Callable[[int], None] | None] = ContextVar("audit_row_started", default=None)

# The operations whose rows carry ``duration_seconds``, counted for GET /metrics (metrics.tally).
TIMED = frozenset({"sync", "agent_sync", "check_rotation", "execute_rotation", "check_policy", "check_drift",
                   "validate_config", "render_config"})


@contextmanager
def audited(
    action: str, resource: str, actor: str | None, details: dict[str, Any] | None = None, *, changes: bool = False,
    ws: Workspace | None = None, project: str | None = None, in_project: bool = False,
) -> Iterator[Facts]:
    """Write one audit row for the enclosed operation, successful or not.

    The caller adds result facts (names, counts, hashes; never values) to the yielded dict, and
    clears its ``succeeded`` when the result reports a failure. An exception marks the row
    failed with the error's code, and the exception is marked ``audited`` so the error handler
    writes no second row. A failure to write the row propagates: an operation must not complete
    unrecorded. An operation that ``changes`` targets or the lockfile gets its row before it
    starts (an audit database that refuses it stops the operation) and completed after it ends.
    The row names the service's project (``projects.current``) and the definition, its
    ``metadata.project`` and environment of ``ws`` (or only ``project``, the ``metadata.project``
    of a definition sent in a request), and where the call came from (``audit.origin``).
    """
    facts = Facts(details or {})
    context = _context(ws, project, in_project) if changes else None
    row_id = (begin(action=action, resource=resource, user=actor, details=facts, context=context)
              if changes else None)
    if row_id is not None and (listener := audit_row_started.get()) is not None:
        listener(row_id)
    started = time.monotonic()

    def write(success: bool, details: dict[str, Any], finding: str | None = None) -> None:
        outcome = finding if success and finding else ("ok" if success else "failed")
        timed = action in TIMED
        if timed:
            details = {**details, "duration_seconds": round(time.monotonic() - started, 3)}
        # The outcome's webhook events and its count in the metrics commit with its row, or none does.
        events = webhook_events.raised(action, success, details, facts.written)
        row_context = context or _context(ws, project, in_project)
        try:
            if row_id is not None:  # a long list of mentions must not hold the write lock with the outcome
                mention_ahead(row_id, resource, details)
            with audited_transaction() if events or timed or facts.drift else contextlib.nullcontext():
                if row_id is None:
                    written = record(action=action, resource=resource, user=actor, success=success,
                                     details=details, outcome=outcome, context=row_context)
                else:
                    finish(row_id, success=success, details=details, outcome=outcome, mentioned=True)
                    written = row_id
                if facts.drift is not None:
                    events += webhook_events.drift_detected(details, drift_seen.new_drift(facts.drift))
                outbox.enqueue(events, actor=actor, audit_row=written,
                               context={**row_context, "origin": audit_origin.current()})
                if timed:
                    tally.add(action, success, details["duration_seconds"], outcome, current_project.name())
        except Exception as exc:
            # A database gone before the transaction could even start: the begun row's outcome is
            # still kept, to be written once it answers (its events and count are not).
            if row_id is not None and database_errors.unreachable(exc):
                keep_unwritten(row_id, success=success, details=details, outcome=outcome)
            raise

    try:
        yield facts
    except ServiceError as exc:
        # An error may carry facts of its own (e.g. the targets a write changed before it failed).
        # Its message is the one the caller is shown (written for users, never holding a value).
        write(False, {**facts, **getattr(exc, "details", {}), "error": exc.code,
                      "message": fit(exc.message, MESSAGE_MAX)})
        exc.audited = True  # type: ignore[attr-defined]
        raise
    except Exception as exc:
        # The database going away mid-operation (a write's lock session ended with it) is named.
        code = "database_unavailable" if database_errors.unreachable(exc) else "internal_error"
        write(False, {**facts, "error": code})
        exc.audited = True  # type: ignore[attr-defined]
        raise
    write(facts.succeeded, dict(facts), facts.finding)


def _context(ws: Workspace | None, project: str | None, in_project: bool = False) -> dict[str, str | None]:
    """Where an operation ran, for its row: the service's project (``projects.current``), the
    definition's path, its ``metadata.project`` and the environment in effect. A definition that
    cannot be read (the operation says why) names only its path and the environment asked for.
    ``project``: a sent definition's ``metadata.project``. A row without ``ws`` names the service's
    project when one was named (a ``/projects/{name}/`` path) or ``in_project`` (it ran in the
    current project: a sent definition checked against its lockfile)."""
    served = current_project.name() if ws is not None or in_project or current_project.explicit() else None
    if ws is None:
        return {"project": served, "definition_project": project}
    found: tuple[str | None, str | None] = (None, ws.environment)
    with contextlib.suppress(ServiceError, OSError, ValueError):
        found = ws.context()
    return {"definition": str(ws.definition_path), "project": served, "definition_project": found[0],
            "environment": found[1]}


def read_audit_logs(
    *, actor: str | None, limit: int, offset: int, action: str | None = None, resource: str | None = None,
    success: bool | None = None, user: str | None = None, since: datetime | None = None,
    until: datetime | None = None, secret: str | None = None, project: str | None = None,
) -> Page[AuditEntry]:
    """A newest-first page; ``since`` is inclusive, ``until`` exclusive; ``secret`` by mentions;
    ``project``: the service project's rows only."""
    named = {"action": action, "resource": resource, "success": success, "user": user, "secret": secret,
             "since": since and since.isoformat(), "until": until and until.isoformat(), "project": project}
    request = {"limit": limit, "offset": offset, **{k: v for k, v in named.items() if v is not None}}
    filters: dict[str, Any] = {k: v for k, v in {"action": action, "resource": resource, "user": user,
                                                 "project": project}.items() if v}
    if success is not None:
        # As ``IN``: a plain boolean filter compiles to ``WHERE NOT success``, which no index serves.
        filters["success__in"] = [success]
    bounds = {k: v for k, v in {"timestamp__gte": since, "timestamp__lt": until}.items() if v is not None}
    with audited("read_audit_logs", "audit", actor, request) as facts:
        entries = _audit_page(limit, offset, filters, bounds, secret)
        facts["returned"] = len(entries)
    return entries


def _audit_page(
    limit: int, offset: int, filters: dict[str, Any], bounds: dict[str, datetime], secret: str | None
) -> Page[AuditEntry]:
    # The page's ids come from the index matching the filter (it holds timestamp and id, so
    # skipped rows are never read from the table), then only those rows are read: a large
    # offset costs an index-only scan. One statement (the ids as a subquery); the total is a
    # second, a count over the same index.
    newest_first = ("-timestamp", "-id")
    page_ids: QuerySet[Any, Any]
    if secret:
        # The mentions' own index (secret, timestamp, entry) is the scan; other filters look
        # each candidate row up by its key.
        matching: QuerySet[Any, Any] = AuditMention.objects.filter(
            secret=fit_name(secret), **bounds, **{f"entry__{k}": v for k, v in filters.items()})
        page_ids = matching.order_by("-timestamp", "-entry_id").values("entry_id")[offset : offset + limit]
    else:
        matching = AuditEntry.objects.filter(**filters, **bounds)
        page_ids = matching.order_by(*newest_first).values("id")[offset : offset + limit]
    return Page(AuditEntry.objects.filter(id__in=page_ids).order_by(*newest_first), matching.count())


def export_audit_logs(
    *, actor: str | None, where: audit_export.AuditFilter, offset: int = 0, limit: int | None = None,
    follow_every: float | None = None, after_id: int = 0,
) -> Iterator[AuditEntry]:
    """Every matching row, oldest first, read a chunk at a time (``audit.export``); with
    ``follow_every`` (seconds), then every new matching row as it is written, until closed.
    ``after_id``: only rows written after that one (a follower that printed a page first).

    The export's own row is written before the first chunk is read (a stream has no end to
    write it at when its reader goes away), naming the filters.
    """
    request: dict[str, Any] = {k: v.isoformat() if isinstance(v, datetime) else v
                               for k, v in asdict(where).items() if v is not None}
    request.update({"offset": offset, "follow": follow_every is not None})
    if limit is not None:
        request["limit"] = limit
    if after_id:
        request["after_id"] = after_id
    with audited("export_audit_logs", "audit", actor, request):
        pass
    if follow_every is None:
        return audit_export.rows(where, after_id=after_id, offset=offset, limit=limit)
    return audit_export.follow(where, every=follow_every, after_id=after_id)


def definition_environ(*, command_line: bool = False) -> ReadableEnviron:
    """The server's environment as a definition may read it (SERVICE_DEFINITION_ENV): in the
    service only the names the operator allows (none by default); on the ``command_line`` every
    variable unless the operator set the list. The service's own settings never (the engine's rule)."""
    allowed = settings.SERVICE_DEFINITION_ENV
    return _readable(None if command_line and allowed is None else tuple(allowed or ()))


@functools.lru_cache(maxsize=8)
def _readable(allowed: tuple[str, ...] | None) -> ReadableEnviron:
    # One object per setting: workspaces and the definition cache key on it.
    return ReadableEnviron(os.environ, allowed)


def operator_egress(*, command_line: bool = False) -> service.Egress:
    """The operator's rule for the server's credentials in one operation (``definition.egress``):
    where they may go, what may be read and written with them, which AWS profiles and roles, Azure
    managed identities, Kubernetes contexts and server variables a definition may name. Read
    locations, identities and variables read as SERVICE_DEFINITION_ENV does: unset, none in the
    service and any on the ``command_line`` (a person running SecretZero's commands on their own
    files); write locations unset: any."""
    reads, writes = settings.SERVICE_PROVIDER_READ, settings.SERVICE_PROVIDER_WRITE
    return _egress(_frozen_pairs(settings.SERVICE_CREDENTIAL_ADDRESSES),
                   None if command_line and reads is None else _frozen_pairs(reads or {}),
                   _selectable(settings.SERVICE_AWS_PROFILES, command_line),
                   _selectable(settings.SERVICE_KUBE_CONTEXTS, command_line),
                   _selectable(settings.SERVICE_DEFINITION_ENV, command_line),
                   None if writes is None else _frozen_pairs(writes),
                   _selectable(settings.SERVICE_AWS_ROLES, command_line),
                   tuple(sorted(settings.SERVICE_ROTATION_CONNECTIONS.items())),
                   _selectable(settings.SERVICE_AZURE_IDENTITIES, command_line))


def _selectable(allowed: Sequence[str] | None, command_line: bool) -> tuple[str, ...] | None:
    return None if command_line and allowed is None else tuple(allowed or ())


_Pairs = tuple[tuple[str, tuple[str, ...]], ...]


def _frozen_pairs(pairs: Mapping[str, Any]) -> _Pairs:
    return tuple(sorted((str(k), (v,) if isinstance(v, str) else tuple(v)) for k, v in (pairs or {}).items()))


@functools.lru_cache(maxsize=8)
def _egress(addresses: _Pairs, read_prefixes: _Pairs | None, aws_profiles: tuple[str, ...] | None,
            kube_contexts: tuple[str, ...] | None, env_allowed: tuple[str, ...] | None,
            write_prefixes: _Pairs | None, aws_roles: tuple[str, ...] | None,
            connections: tuple[tuple[str, str], ...] = (),
            azure_identities: tuple[str, ...] | None = None) -> service.Egress:
    # One object per setting: workspaces and the definition cache key on it.
    return service.egress_of(dict(addresses), None if read_prefixes is None else dict(read_prefixes),
                             aws_profiles=aws_profiles,
                             kube_contexts=kube_contexts, env_allowed=env_allowed,
                             write_prefixes=None if write_prefixes is None else dict(write_prefixes),
                             aws_roles=aws_roles, connections=dict(connections),
                             azure_identities=azure_identities)


def workspace(
    *, definition: Path | None = None, lockfile: Path | None = None, var_files: Sequence[str] = (),
    environment: str | None = None, command_line: bool = False,
) -> Workspace:
    """The engine's view of the configured files; arguments override the settings (CLI flags).
    ``environment`` names the lane (``environments.profiles.<name>``); None: the default one.
    ``command_line``: a person runs this on their own files (secretsctl, manage.py), not the
    service for a request or a job: it reads the environment as ``definition_environ`` says, and
    its var files need not be declared by the definition.

    Writers also take a PostgreSQL advisory lock when the audit database is PostgreSQL, so
    instances on several hosts sharing one lockfile never interleave their writes.
    """
    if definition is None:
        # The project the request or job runs in (projects.current): its definition and lockfile.
        project = current_project.get()
        definition, lockfile = project.definition, lockfile or project.lockfile
    else:
        lockfile = lockfile or settings.SERVICE_LOCKFILE
    # The working folder only matters to relative paths; asking for it otherwise would fail
    # every request of a server whose folder was removed (a replaced deployment).
    relative = not os.path.isabs(definition) or (lockfile is not None and not os.path.isabs(lockfile))
    built = _workspace(
        definition,
        lockfile,
        tuple(var_files),
        settings.SERVICE_ALLOW_SCRIPTS,
        settings.SERVICE_MAX_DEFINITION_BYTES,
        database_locks.extra_lockfile_lock(),
        os.getcwd() if relative else "",
        settings.SERVICE_TARGET_ROOTS,
        _interpolation_limits(),
        _service_paths(),
        settings.SERVICE_VAR_FILES_FROM_OUTPUTS,
        settings.SERVICE_LOCK_TIMEOUT,
        environment,
        definition_environ(command_line=command_line),
        not command_line and not settings.SERVICE_UNDECLARED_VAR_FILES,
        operator_egress(command_line=command_line),
    )
    if (allowed := current_project.environments()) and _environment_of(built) not in allowed:
        raise EnvironmentRefused(environment)
    return built


def _environment_of(ws: Workspace) -> str | None:
    """The environment ``ws`` runs in: the one named, else the definition's default one."""
    if ws.environment is not None:
        return ws.environment
    try:
        return ws.context()[1]
    except (ServiceError, OSError, ValueError):
        return None


def release_caches() -> None:
    """Drop the parsed definitions and lockfiles this process keeps, for a command line run that
    is about to exit: held to the end, the interpreter's shutdown passes its garbage collector
    over every object in them (~0.7 s of CPU after a status of 20,000 secrets)."""
    clear_definition_cache()
    clear_lockfile_cache()


def _interpolation_limits() -> service.InterpolationLimits:
    return _limits(settings.SERVICE_MAX_INTERPOLATED_BYTES, settings.SERVICE_MAX_RENDERED_BYTES,
                   settings.SERVICE_RENDER_TIMEOUT)


@functools.lru_cache(maxsize=8)
def _limits(string_bytes: int, rendered_bytes: int, render_seconds: float) -> service.InterpolationLimits:
    return service.InterpolationLimits(string_bytes=string_bytes, rendered_bytes=rendered_bytes,
                                       render_seconds=render_seconds)


def _service_paths() -> tuple[Path, ...]:
    """What the service writes outside the definition's files: its data folder (database,
    secret key) and an SQLite database kept elsewhere, with its journal files."""
    database = settings.DATABASES["default"]
    name = str(database["NAME"]) if database["ENGINE"] == "django.db.backends.sqlite3" else None
    relative = not os.path.isabs(settings.DATA_DIR) or (name is not None and not os.path.isabs(name))
    # Built once per settings: a dozen Path objects a request were a fifth of a secret list's cost.
    return _paths_of(str(settings.DATA_DIR), name, _cwd() if relative else "")


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return ""


@functools.lru_cache(maxsize=8)
def _paths_of(data_dir: str, database: str | None, cwd: str) -> tuple[Path, ...]:
    paths: list[Path] = []
    data = _absolute(data_dir)
    if data is not None:
        paths += [data, data / "secret_key"]
    name = _absolute(database) if database is not None and database != ":memory:" else None
    if name is not None:
        paths += [name, *(name.with_name(name.name + suffix) for suffix in ("-wal", "-shm", "-journal"))]
    return tuple(paths)


def _absolute(path: str | Path) -> Path | None:
    """None for a relative path when the working folder is gone (it then names nothing to refuse)."""
    try:
        return Path(path).absolute()
    except OSError:
        return None


# One per project and lane in use: a service of many projects asks for each of theirs.
@functools.lru_cache(maxsize=512)
def _workspace(
    definition: Path, lockfile: Path | None, var_files: tuple[str, ...], allow_scripts: bool,
    max_definition_bytes: int, extra_lock: ExtraLock | None, cwd: str,
    target_roots: tuple[Path, ...] = (),
    interpolation_limits: service.InterpolationLimits | None = None,
    service_paths: tuple[Path, ...] = (), var_files_from_outputs: bool = False, lock_timeout: float = 60.0,
    environment: str | None = None, environ: ReadableEnviron | None = None, declared_var_files_only: bool = False,
    egress: service.Egress | None = None,
) -> Workspace:
    # Every request asks for the same one: built once per settings (and working folder, which
    # relative paths depend on) rather than a few path objects per read (~5% of a status read).
    return Workspace(
        definition_path=Path(cwd, definition),
        lockfile_override=Path(cwd, lockfile) if lockfile else None,
        allow_scripts=allow_scripts,
        var_files=var_files,
        max_definition_bytes=max_definition_bytes,
        extra_lock=extra_lock,
        target_roots=target_roots or None,
        interpolation_limits=interpolation_limits or service.InterpolationLimits(),
        service_paths=service_paths,
        var_files_from_outputs=var_files_from_outputs,
        lock_timeout=lock_timeout,
        environment=environment,
        environ=environ,
        declared_var_files_only=declared_var_files_only,
        egress=egress or service.Egress(),
        definition_store=definition_store.STORE,
    )


def _lane(ws: Workspace) -> dict[str, Any]:
    """What every operation's audit row says about where it ran: its var files and, when one
    was named, its environment (a row without one ran in ``environments.default``'s lane)."""
    return {"var_files": list(ws.var_files), **({"environment": ws.environment} if ws.environment else {})}


def _resource(secret_name: str | None) -> str:
    return f"secret:{secret_name}" if secret_name else "secrets"


def list_secrets(ws: Workspace, *, actor: str | None) -> Sequence[SecretSummary]:
    with audited("list_secrets", "secrets", actor, _lane(ws), ws=ws) as facts:
        secrets = service.list_secrets(ws)
        facts["count"] = len(secrets)
    return secrets


def secret_status(ws: Workspace, name: str, *, actor: str | None) -> SecretStatus:
    with audited("get_secret_status", f"secret:{name}", actor, _lane(ws), ws=ws) as facts:
        found = service.secret_status(ws, name)
        facts["exists"] = found.exists
    return found


def secret_statuses(ws: Workspace, *, actor: str | None) -> list[SecretStatus]:
    """Every declared secret's status: one audit row naming the count and how many are missing.

    It mentions no secret: it reads the lockfile's dates, never a value, and 20,000 mentions cost
    more than the status itself (``?secret=`` finds what was done to a secret, and its own status)."""
    with audited("get_secrets_status", "secrets", actor, _lane(ws), ws=ws) as facts:
        found = service.secret_statuses(ws)
        facts.update(count=len(found), missing=sum(1 for st in found if not st.exists))
    return found


def secrets_overview(ws: Workspace, *, actor: str | None) -> list[overview.SecretOverview]:
    """Every declared secret with its rotation dates and last drift result (the admin's page)."""
    with audited("read_secrets_overview", "secrets", actor, _lane(ws), ws=ws) as facts:
        rows = overview.build(service.list_secrets(ws), service.secret_statuses(ws), ws.now())
        facts.update(count=len(rows), overdue=sum(1 for row in rows if row.overdue))
    return rows


def audit_activity(*, actor: str | None, days: int) -> activity.Activity:
    """Operations and rotations per day over the last ``days`` days (the admin's charts)."""
    with audited("read_audit_activity", "audit", actor, {"days": days}):
        return activity.activity(days)


def sync(
    ws: Workspace, *, actor: str | None, dry_run: bool = False, force: bool = False, secret_name: str | None = None,
    repair: bool = False, refresh: bool = False, progress: Progress | None = None,
) -> SyncResult:
    request = {"dry_run": dry_run, "force": force, "repair": repair, "refresh": refresh, "secret_name": secret_name,
               **_lane(ws)}
    with audited("sync", _resource(secret_name), actor, request, changes=not dry_run, ws=ws) as facts:
        result = service.sync(ws, dry_run=dry_run, force=force, secret_name=secret_name, repair=repair,
                              refresh=refresh, progress=progress)
        facts.update(generated=result.secrets_generated, skipped=result.secrets_skipped,
                     failed=result.secrets_failed, errors=[asdict(e) for e in result.errors])
        facts["repaired"] = result.secrets_repaired
        if result.written_targets:
            facts["written_targets"] = result.written_targets
        facts.written = result.written
        if result.sources:
            facts["sources"] = result.sources  # imported values: the source kind, never the value
        if result.refreshed:
            facts["refreshed"] = result.refreshed
        facts.succeeded = not (result.secrets_failed or result.errors)
    if not dry_run:
        _index_for_status(ws)
    return result


def clean_lockfile(ws: Workspace, *, actor: str | None, dry_run: bool = False) -> CleanResult:
    """SecretZero's ``clean``: drop the lockfile entries of secrets the definition no longer has."""
    request = {"dry_run": dry_run, "var_files": list(ws.var_files)}
    with audited("clean_lockfile", "secrets", actor, request, changes=not dry_run, ws=ws) as facts:
        result = service.clean_lockfile(ws, dry_run=dry_run)
        facts["removed"] = result.removed
    if not dry_run:
        _index_for_status(ws)
    return result


def import_values(
    ws: Workspace, *, actor: str | None, secret_names: Sequence[str] | None = None, dry_run: bool = False,
) -> ImportResult:
    """SecretZero's ``import``: record the hashes of the values targets already hold; generates nothing."""
    request = {"dry_run": dry_run, "secret_names": list(secret_names or []), "var_files": list(ws.var_files)}
    resource = _resource(secret_names[0]) if secret_names and len(secret_names) == 1 else "secrets"
    with audited("import_values", resource, actor, request, changes=not dry_run, ws=ws) as facts:
        result = service.import_values(ws, secret_names=secret_names, dry_run=dry_run)
        # Counts and the keys recorded, not every row with its detail.
        counts: dict[str, int] = {}
        for row in result.rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        recorded = [row.lock_key for row in result.rows if row.status in ("imported", "updated")]
        facts.update(counts=counts, recorded=recorded, errors=[asdict(e) for e in result.errors])
        if result.refreshed:
            facts["refreshed"] = result.refreshed
        facts.succeeded = not result.errors
    if not dry_run:
        _index_for_status(ws)
    return result


def check_rotation(ws: Workspace, *, actor: str | None, secret_name: str | None = None) -> RotationCheckResult:
    request = {"secret_name": secret_name, **_lane(ws)}
    with audited("check_rotation", _resource(secret_name), actor, request, ws=ws) as facts:
        result = service.check_rotation(ws, secret_name=secret_name)
        facts.update(checked=result.secrets_checked, due=len(result.secrets_due), overdue=len(result.secrets_overdue))
    return result


def execute_rotation(
    ws: Workspace, *, actor: str | None, secret_name: str | None = None, force: bool = False,
    progress: Progress | None = None,
) -> RotationResult:
    request = {"secret_name": secret_name, "force": force, **_lane(ws)}
    with audited("execute_rotation", _resource(secret_name), actor, request, changes=True, ws=ws) as facts:
        result = service.execute_rotation(ws, secret_name=secret_name, force=force, progress=progress)
        facts.update(rotated=result.rotated, failed=result.failed, errors=[asdict(e) for e in result.errors])
        if result.written_targets:
            facts["written_targets"] = result.written_targets
        facts.written = result.written
        if result.sources:
            facts["sources"] = result.sources
        facts.succeeded = not (result.failed or result.errors)
    _index_for_status(ws)
    return result


def check_policy(ws: Workspace, *, actor: str | None, fail_on_warning: bool = False) -> PolicyResult:
    request = {"fail_on_warning": fail_on_warning, **_lane(ws)}
    with audited("check_policy", "secrets", actor, request, ws=ws) as facts:
        result = service.check_policies(ws, fail_on_warning=fail_on_warning)
        facts.update(compliant=result.compliant, errors=len(result.errors), warnings=len(result.warnings))
    return result


def check_drift(
    ws: Workspace, *, actor: str | None, secret_name: str | None = None, progress: Progress | None = None
) -> DriftResult:
    request = {"secret_name": secret_name, **_lane(ws)}
    began = timezone.now()
    with audited("check_drift", _resource(secret_name), actor, request, ws=ws) as facts:
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
        tally.drift_checked(definition=str(ws.definition_path), environment=ws.environment, at=began,
                            drifted=len(result.secrets_with_drift), unreadable=len(unreadable))
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
                                  limits=_interpolation_limits(), marked=definition_environ())
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
    request = {"file": ws.definition_path.name, **_lane(ws)}
    with audited("validate_config", "config", actor, request, ws=ws) as facts:
        check = functools.partial(service.validate_workspace, ws)
        report: ValidationReport = service.without_recorded_values(ws, check)
        facts.update(valid=report.valid, errors=len(report.errors), warnings=len(report.warnings))
    return report


def render_config(ws: Workspace, *, actor: str | None, variables: dict[str, Any] | None = None) -> RenderResult:
    request = {**_lane(ws), "variables": sorted(variables or {})}
    with audited("render_config", "config", actor, request, ws=ws) as facts:
        result: RenderResult = service.without_recorded_values(
            ws, functools.partial(service.render_definition, ws, variables=variables), sent=variables,
        )
        facts.update(variables_used=result.variables_used, environment_used=result.environment_used)
    return result


def reveal_secret(ws: Workspace, name: str, *, actor: str | None) -> RevealedSecret:
    """The value endpoint: off unless SERVICE_ALLOW_VALUE_READ=true and an API key is set."""
    with audited("read_secret_value", f"secret:{name}", actor, _lane(ws), ws=ws) as facts:
        if not settings.SERVICE_ALLOW_VALUE_READ:
            raise ValueReadDisabled(
                "Reading secret values is disabled; set SERVICE_ALLOW_VALUE_READ=true to enable it."
            )
        if actor is None:  # only insecure mode names nobody
            raise ValueReadDisabled("Reading secret values needs an API key: it is never served in insecure mode.")
        revealed = service.read_value(ws, name)
        facts.update(verified=revealed.verified, sources=revealed.sources)
    return revealed


def agent_sync(
    ws: Workspace, *, actor: str | None, dry_run: bool = False, force: bool = False, secret_name: str | None = None,
    repair: bool = True, refresh: bool = False, progress: Progress | None = None,
) -> AgentSyncResult:
    request = {"dry_run": dry_run, "force": force, "repair": repair, "refresh": refresh, "secret_name": secret_name,
               **_lane(ws)}
    with audited("agent_sync", _resource(secret_name), actor, request, changes=not dry_run, ws=ws) as facts:
        result = service.agent_sync(ws, dry_run=dry_run, force=force, secret_name=secret_name, repair=repair,
                                    refresh=refresh, progress=progress)
        facts.update(status=result.status, generated=result.sync.secrets_generated,
                     skipped=result.sync.secrets_skipped, failed=result.sync.secrets_failed,
                     errors=[asdict(e) for e in result.sync.errors])
        facts["repaired"] = result.sync.secrets_repaired
        if result.sync.sources:
            facts["sources"] = result.sync.sources
        if result.sync.refreshed:
            facts["refreshed"] = result.sync.refreshed
        if result.sync.written_targets:
            facts["written_targets"] = result.sync.written_targets
        facts.written = result.sync.written
        facts.succeeded = not (result.sync.secrets_failed or result.sync.errors)
    if not dry_run:
        _index_for_status(ws)
    return result


def _index_for_status(ws: Workspace) -> None:
    """After a write, while this process holds the lockfile it wrote: its status index for the
    ``status`` another process runs next (``service.index_lockfiles``). It only saves work, so
    a lockfile that cannot be read now is left to the operation that next reads it."""
    with contextlib.suppress(ServiceError):
        service.index_lockfiles(ws)


def _definition_or_none(ws: Workspace) -> Definition | None:
    """Discovery answers even without a usable definition: it then lists only built-ins."""
    try:
        return ws.definition()
    except (DefinitionNotFound, DefinitionInvalid):
        return None


def list_generators(*, actor: str | None) -> list[dict[str, Any]]:
    with audited("list_generators", "generators", actor) as facts:
        generators = service.generator_catalogue()
        facts["count"] = len(generators)
    return generators


def list_secret_types(ws: Workspace, *, actor: str | None) -> list[dict[str, Any]]:
    with audited("list_secret_types", "secret_types", actor, _lane(ws), ws=ws) as facts:
        types = service.secret_types(_definition_or_none(ws))
        facts["count"] = len(types)
    return types


def list_targets(*, actor: str | None) -> list[dict[str, Any]]:
    with audited("list_targets", "targets", actor) as facts:
        targets = service.target_catalogue()
        facts["count"] = len(targets)
    return targets


def list_providers(ws: Workspace, *, actor: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Provider kinds, and the providers the definition declares (never their credentials)."""
    with audited("list_providers", "providers", actor, _lane(ws), ws=ws) as facts:
        definition = _definition_or_none(ws)
        kinds = service.provider_catalogue()
        declared = service.declared_providers(definition) if definition is not None else []
        facts.update(kinds=len(kinds), declared=len(declared))
    return kinds, declared
