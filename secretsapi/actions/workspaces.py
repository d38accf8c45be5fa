"""The engine's view of the configured files, and the operator's rules it runs under.

Every action builds its ``Workspace`` here from the settings (and the project a request or
job runs in: ``projects.current``); interfaces name the type as ``workspaces.Workspace``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings

from projects import current as current_project
from projects.errors import EnvironmentRefused
from secretsapi import database_locks, definition_store, service
from secretsapi.service.definition.readable_environ import ReadableEnviron
from secretsapi.service.errors import ServiceError
from secretsapi.service.loading.loader import clear_definition_cache
from secretsapi.service.state.lockfile_io import clear_lockfile_cache
from secretsapi.service.state.locks import ExtraLock
from secretsapi.service.workspace import Workspace as Workspace  # interfaces name it as workspaces.Workspace


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
    elif lockfile is None:
        project = current_project.get()
        # A local run on an added project's definition (management.base.in_project) writes that
        # project's lockfile, the one the service reads for it, never SERVICE_LOCKFILE (the
        # default project's): else the service would report the project's secrets missing.
        lockfile = settings.SERVICE_LOCKFILE if project.is_default or not _same_file(definition, project.definition) \
            else project.lockfile
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
        interpolation_limits(),
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


def _same_file(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


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


def interpolation_limits() -> service.InterpolationLimits:
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


def lane(ws: Workspace) -> dict[str, Any]:
    """What every operation's audit row says about where it ran: its var files and, when one
    was named, its environment (a row without one ran in ``environments.default``'s lane)."""
    return {"var_files": list(ws.var_files), **({"environment": ws.environment} if ws.environment else {})}


def resource_of(secret_name: str | None) -> str:
    return f"secret:{secret_name}" if secret_name else "secrets"
