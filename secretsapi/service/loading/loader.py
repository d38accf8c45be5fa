"""Definition files: loading with a parse cache."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from stat import S_ISREG
from typing import Any

from secretsapi.service.definition.budget import InterpolationLimits
from secretsapi.service.definition.egress import Egress
from secretsapi.service.definition.model import Definition
from secretsapi.service.definition.readable_environ import ReadableEnviron, readable
from secretsapi.service.definition.status_plan import StatusPlan, plan_of
from secretsapi.service.definition.var_files import load_var_files, resolve_var_file
from secretsapi.service.definition.yaml_loader import MAX_BYTES, load_yaml, read_definition
from secretsapi.service.errors import DefinitionInvalid, DefinitionNotFound
from secretsapi.service.loading import stored
from secretsapi.service.loading.checker import DefinitionChecker
from secretsapi.service.loading.stored import DefinitionStore
from secretsapi.service.util.hashing import sha256_text

logger = logging.getLogger(__name__)

_CACHE_SIZE = 32
# ``${NAME}`` and ``${NAME:-default}``: names the environment may answer.
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")
_MIN_HIDDEN = 3
# SecretZero's machine-local lockfile beside the shared one (workspace.LOCAL_LOCKFILE_NAME).
_LOCAL_LOCKFILE = ".gitsecrets.local.lock"


# -- loading and caching -------------------------------------------------------------------

_cache: OrderedDict[tuple[Any, ...], Definition] = OrderedDict()
# Plans read from the shared store, by the same key: a worker answering status requests reads
# the store once, not once a request, until some other request parses the definition.
_plans: OrderedDict[tuple[Any, ...], StatusPlan] = OrderedDict()
_cache_lock = threading.Lock()
_parse_lock = threading.RLock()


def clear_definition_cache() -> None:
    with _cache_lock:
        _cache.clear()
        _plans.clear()


def load_definition(
    path: Path,
    *,
    var_files: Sequence[str] = (),
    variables: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    max_bytes: int = MAX_BYTES,
    target_roots: tuple[Path, ...] = (),
    limits: InterpolationLimits | None = None,
    service_paths: tuple[Path, ...] = (),
    allow_scripts: bool = False,
    target_profile: str | None = None,
    store: DefinitionStore | None = None,
    egress: Egress | None = None,
) -> Definition:
    """Load, interpolate and check a definition file; cached while nothing it depends on changes.

    ``store`` (optional) keeps parsed definitions for other processes (``loading.stored``): a command
    line run then skips the parse when nothing it depends on changed since an earlier one.

    ``target_roots`` (SERVICE_TARGET_ROOTS), ``service_paths`` (the service's own files, never
    a file a definition names) and ``allow_scripts`` (SERVICE_ALLOW_SCRIPTS: whether what the
    definition names may run commands) are carried by the result, so they are part of the key:
    the same settings give the same object, which the secret list's cache keys on.

    The returned Definition may be shared between callers and threads: treat it as read-only.
    """
    path = Path(os.path.abspath(path))
    env = readable(environ)
    key = _key(path, var_files, variables, env, max_bytes, target_roots, limits, service_paths, allow_scripts,
               target_profile, egress or Egress())
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return cached
    # One parse at a time: threads that miss together (a poll right after an edit) wait for
    # the first one's result instead of each building their own copy, which for 5,000 secrets
    # is ~60 MB and a second of CPU per thread.
    with _parse_lock:
        with _cache_lock:
            cached = _cache.get(key)
            if cached is None:
                # Entries for an earlier version of this file can never match again: dropped
                # before the parse, so a worker does not hold both versions at its peak.
                for stale in [k for k in _cache if k[0] == key[0] and k[1] != key[1]]:
                    del _cache[stale]
        if cached is not None:
            return cached
        # Only what the files and settings make can be shared: request variables and another
        # environment than the process's stay in this process.
        shared = store if _process_wide(env) and not variables else None
        return _load_and_cache(key, path, tuple(var_files), variables, env, max_bytes, target_roots, limits,
                               service_paths, allow_scripts, target_profile, shared, egress or Egress())


def _key(
    path: Path, var_files: Sequence[str], variables: Mapping[str, Any] | None, env: Mapping[str, str],
    max_bytes: int, target_roots: tuple[Path, ...], limits: InterpolationLimits | None,
    service_paths: tuple[Path, ...], allow_scripts: bool, target_profile: str | None, egress: Egress,
) -> tuple[Any, ...]:
    """The in-process cache's key: the files' stats and every other input of the parse; the
    definition file missing or not a file is DefinitionNotFound."""
    try:
        stat = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise DefinitionNotFound(f"definition file not found: {path}") from None
    except OSError:
        raise DefinitionInvalid([f"{path.name}: cannot be read"]) from None
    if not S_ISREG(stat.st_mode):
        raise DefinitionNotFound(f"definition file not found: {path} is not a file")
    var_stats = []
    for given in var_files:
        real = resolve_var_file(path.parent, given)
        st = real.stat()
        var_stats.append((str(real), st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
    return (
        # The path as given (absolute): the stat above follows links, so a repointed link
        # changes the key; resolving every component again cost each read request ~50 us.
        str(path),
        (stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns, stat.st_dev),
        tuple(var_files),
        tuple(var_stats),
        _freeze(variables),
        # ${NAME} falls back to the environment, so a changed environment changes the result.
        _environ_key(env),
        max_bytes,
        target_roots,
        limits,
        service_paths,
        allow_scripts,
        target_profile,
        egress,
    )


def _load_and_cache(
    key: tuple[Any, ...], path: Path, var_files: tuple[str, ...], variables: Mapping[str, Any] | None,
    env: Mapping[str, str], max_bytes: int, target_roots: tuple[Path, ...], limits: InterpolationLimits | None,
    service_paths: tuple[Path, ...], allow_scripts: bool, target_profile: str | None = None,
    store: DefinitionStore | None = None, egress: Egress | None = None,
) -> Definition:
    egress = egress or Egress()
    if store is None:
        definition = _load(path, var_files, variables, env, max_bytes, target_roots, limits, service_paths,
                           allow_scripts, target_profile, egress=egress)
    else:
        settings, parse = _shared_parse(key, path, var_files, max_bytes, target_roots, limits, service_paths,
                                        allow_scripts, target_profile, egress)
        definition = stored.load(store, path, var_files, env, max_bytes, settings, parse)
    with _cache_lock:
        _cache[key] = definition
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return definition


def _shared_parse(
    key: tuple[Any, ...], path: Path, var_files: tuple[str, ...], max_bytes: int, target_roots: tuple[Path, ...],
    limits: InterpolationLimits | None, service_paths: tuple[Path, ...], allow_scripts: bool,
    target_profile: str | None, egress: Egress,
) -> tuple[str, stored.Parse]:
    """What ``loading.stored`` needs to share the parse: the settings it carries (the in-process
    key but for the stats, which content replaces, and the environment: path, var file names,
    size limit, target roots, interpolation limits, service paths, scripts, target profile) and
    the parse of given text under a watched environment."""

    def parse(watched: Mapping[str, str], text: str) -> Definition:
        return _load(path, var_files, None, watched, max_bytes, target_roots, limits, service_paths,
                     allow_scripts, target_profile, text=text, egress=egress)

    return repr((key[0], key[2], *key[6:])), parse


def load_status_plan(
    path: Path,
    *,
    var_files: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    max_bytes: int = MAX_BYTES,
    target_roots: tuple[Path, ...] = (),
    limits: InterpolationLimits | None = None,
    service_paths: tuple[Path, ...] = (),
    allow_scripts: bool = False,
    target_profile: str | None = None,
    store: DefinitionStore | None = None,
    egress: Egress | None = None,
) -> StatusPlan:
    """``plan_of(load_definition(...))`` for the same arguments, without building the definition
    when ``store`` holds the plan an earlier process derived from the same inputs (a status of
    20,000 secrets then reads ~20,000 tuples instead of ~100,000 objects). A definition this
    process already holds is used as it is; errors are load_definition's."""
    path = Path(os.path.abspath(path))
    env = readable(environ)
    egress = egress or Egress()
    key = _key(path, var_files, None, env, max_bytes, target_roots, limits, service_paths, allow_scripts,
               target_profile, egress)
    with _cache_lock:
        cached = _cache.get(key)
        plan = _plans.get(key)
    if cached is None and plan is not None:
        return plan
    if cached is None and store is not None and _process_wide(env):
        settings, parse = _shared_parse(key, path, tuple(var_files), max_bytes, target_roots, limits,
                                        service_paths, allow_scripts, target_profile, egress)
        plan = stored.load_plan(store, path, var_files, env, max_bytes, settings, parse)
        with _cache_lock:
            _plans[key] = plan
            while len(_plans) > _CACHE_SIZE:
                _plans.popitem(last=False)
        return plan
    if cached is None:
        cached = load_definition(path, var_files=var_files, environ=environ, max_bytes=max_bytes,
                                 target_roots=target_roots, limits=limits, service_paths=service_paths,
                                 allow_scripts=allow_scripts, target_profile=target_profile, store=store,
                                 egress=egress)
    return plan_of(cached)


def _process_wide(env: Mapping[str, str]) -> bool:
    """The process's own environment (as the operator lets a definition read it): a parse under
    it may be shared with other processes (``loading.stored`` checks the names it looked up)."""
    return isinstance(env, ReadableEnviron) and env.process_wide


def _environ_key(env: Mapping[str, str]) -> Any:
    """The environment as a cache key. os.environ decodes every item when iterated (~0.3 ms a
    call, on every read request); its raw bytes mapping gives an equally exact key for free. A
    readable view is keyed on what it allows and on the whole environment beneath it."""
    if isinstance(env, ReadableEnviron):
        return (env.allowed, _environ_key(env.source))
    raw = getattr(env, "_data", None) if env is os.environ else None
    return frozenset((raw if isinstance(raw, dict) else env).items())


def _freeze(variables: Mapping[str, Any] | None) -> str:
    try:
        return json.dumps(variables, sort_keys=True, default=repr) if variables else ""
    except TypeError:  # keys of mixed types cannot be sorted
        return repr(variables)


def _load(
    path: Path, var_files: tuple[str, ...], variables: Mapping[str, Any] | None, env: Mapping[str, str],
    max_bytes: int, target_roots: tuple[Path, ...], limits: InterpolationLimits | None,
    service_paths: tuple[Path, ...] = (), allow_scripts: bool = False, target_profile: str | None = None,
    *, text: str | None = None, egress: Egress | None = None,
) -> Definition:
    if text is None:
        text = read_definition(path, max_bytes)
    doc = load_yaml(text, source=path.name, max_bytes=max_bytes)
    text_hash = sha256_text(text)
    overlays = [*load_var_files(path.parent, var_files), *([variables] if variables else [])]
    named = set(_ENV_REF.findall(text)) | set(_ENV_REF.findall(json.dumps(overlays, default=str)))
    del text  # not needed past here: a large definition's peak should not hold it
    checker = DefinitionChecker(env, strict=False, limits=limits, target_profile=target_profile)
    parsed = checker.check(doc, overlays, consume=True)
    del doc
    if checker.errors:
        raise DefinitionInvalid(checker.errors)
    return Definition(
        path=path,
        version=parsed.version,
        variables=parsed.variables,
        metadata=parsed.metadata,
        providers=parsed.providers,
        secrets=tuple(parsed.secrets),
        policies=parsed.policies,
        text_hash=text_hash,
        # This exact form (default separators, sorted keys) matches SecretZero's lockfile.
        variables_hash=sha256_text(json.dumps(parsed.merged_variables, sort_keys=True, default=str)),
        var_files=var_files,
        warnings=tuple(checker.warnings),
        environments=parsed.environments,
        target_roots=target_roots,
        allow_scripts=allow_scripts,
        egress=egress or Egress(),
        render_seconds=(limits or InterpolationLimits()).render_seconds,
        environment_values=_environment_values(named, parsed.merged_variables, env),
        # A lane's lockfile is the service's own file too: no target, source or provider file may be it.
        service_paths=(*service_paths, *(f for profile in parsed.environments.profiles.values() if profile.lockfile
                                          for f in lockfile_files(path.parent / profile.lockfile))),
        _by_name={secret.name: secret for secret in parsed.secrets},
    )


def lockfile_files(lockfile: Path) -> tuple[Path, ...]:
    """A lockfile and what the service keeps beside it: its lock file, its targets' lock folder,
    the machine-local lockfile and that one's lock file."""
    local = lockfile.with_name(_LOCAL_LOCKFILE)
    return (lockfile, lockfile.with_name(lockfile.name + ".lck"), lockfile.with_name(lockfile.name + ".targets"),
            local, local.with_name(local.name + ".lck"))


def _environment_values(named: set[str], variables: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """``${NAME}`` references answered by the environment (a variable of that name wins), as
    value -> expression. Values under three characters are kept: replacing them would garble
    every message for what little they show."""
    found: dict[str, str] = {}
    for name in sorted(named):
        value = env.get(name) if name not in variables else None
        if value is not None and len(value) >= _MIN_HIDDEN and value not in found:
            found[value] = f"${{{name}}}"
    return found
