"""Where an operation runs: the definition, the lockfile and the engine's settings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from secretsapi.service import var_file_guard
from secretsapi.service.definition.budget import InterpolationLimits
from secretsapi.service.definition.loader import load_definition
from secretsapi.service.definition.model import Definition, EnvironmentProfile
from secretsapi.service.definition.yaml_loader import MAX_BYTES
from secretsapi.service.errors import DefinitionInvalid, EnvironmentNotFound, ServiceError, TargetError
from secretsapi.service.state.locks import lockfile_lock, stripe_locks
from secretsapi.service.targets.paths import named_file, refused_message

LOCKFILE_NAME = ".gitsecrets.lock"
DEFINITION_NAME = "Secretfile.yml"
# SecretZero's machine-local lockfile, beside the shared one, for secrets marked ``local: true``.
LOCAL_LOCKFILE_NAME = var_file_guard.LOCAL_LOCKFILE_NAME

# Builds a lock that serializes writers beyond this machine (e.g. a database advisory lock):
# called with the lockfile's absolute path and the timeout in seconds (negative: no limit).
ExtraLock = Callable[[Path, float], AbstractContextManager[Any]]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Workspace:
    definition_path: Path
    # None: SecretZero's default (see lockfile_path).
    lockfile_override: Path | None = None
    allow_scripts: bool = False
    lock_timeout: float = 60.0
    # Days before the due date that count as "due"; None: min(7, period / 10).
    warning_days: int | None = None
    var_files: Sequence[str] = ()
    # The environment lane (``environments.profiles.<name>``, SecretZero's ``-e``); None: ``default``.
    environment: str | None = None
    variables: Mapping[str, Any] | None = None
    environ: Mapping[str, str] | None = None
    clock: Callable[[], datetime] = field(default=utc_now)
    # Larger definition files are refused without being read (SERVICE_MAX_DEFINITION_BYTES).
    max_definition_bytes: int = MAX_BYTES
    # None: the file lock alone, enough when every writer shares this machine's filesystem.
    extra_lock: ExtraLock | None = None
    # Folders local targets may write in (SERVICE_TARGET_ROOTS); None: the definition's folder.
    target_roots: tuple[Path, ...] | None = None
    # How large interpolation may make one string and the whole rendered definition
    # (SERVICE_MAX_INTERPOLATED_BYTES, SERVICE_MAX_RENDERED_BYTES).
    interpolation_limits: InterpolationLimits = field(default_factory=InterpolationLimits)
    # What the service itself writes beside the definition's files (its data folder, its
    # database): never a var file (see var_file_guard).
    service_paths: tuple[Path, ...] = ()
    # SERVICE_VAR_FILES_FROM_OUTPUTS: a target file may be a var file (SecretZero allows it).
    var_files_from_outputs: bool = False

    @property
    def lockfile_path(self) -> Path:
        """Where SecretZero would keep this definition's lockfile, unless overridden.

        The selected lane's ``environments.profiles.<name>.lockfile`` (relative to the
        definition's folder), else ``.gitsecrets.lock`` beside a ``Secretfile.yml`` and
        ``<stem>.lock`` beside any other definition file. The definition is cached, so this
        costs a stat; a definition that cannot be loaded falls back to the file name rule
        (the operation reports why it cannot be loaded).
        """
        if self.lockfile_override is not None:
            return self.lockfile_override
        folder = self.definition_path.parent
        try:
            definition: Definition | None = self._with_profile(self.var_files)
        except EnvironmentNotFound:
            raise  # no lockfile stands in for a lane that is not there
        except ServiceError:
            definition = None
        lane, profile = definition.environments.resolve(self.environment) if definition is not None else (None, None)
        if definition is not None and profile is not None and profile.lockfile:
            return self._confined_lockfile(profile.lockfile, definition, lane)
        if self.definition_path.name == DEFINITION_NAME:
            return folder / LOCKFILE_NAME
        return folder / f"{self.definition_path.stem}.lock"

    def _confined_lockfile(self, given: str, definition: Definition, lane: str | None) -> Path:
        """A lockfile the definition names (``environments.profiles.<name>.lockfile``) and the
        files beside it (its ``.lck``, its ``.targets/`` locks, the machine-local lockfile) stay
        inside the target roots or the definition's folder, never the service's own files: a
        definition cannot make the service read, create or rewrite a file elsewhere. Refused
        before anything is read, in the same words whatever is there; SERVICE_LOCKFILE (the
        operator's) is not checked."""
        folder = self.definition_path.parent
        path = folder / given  # an absolute lockfile replaces the folder
        roots = (*(self.target_roots or ()), folder)
        for name in (path.name, path.name + ".lck", path.name + ".targets", LOCAL_LOCKFILE_NAME):
            try:
                named_file(folder, str(path.with_name(name)), roots, self.service_paths)
            except TargetError:
                place = f"environments.profiles.{lane}.lockfile"
                shown = definition.environment_hidden(given)  # a path from ${NAME} named by its expression
                raise DefinitionInvalid([f"{place}: {refused_message(shown)}"]) from None
        return path

    @property
    def local_lockfile_path(self) -> Path:
        """SecretZero's machine-local lockfile: ``.gitsecrets.local.lock`` beside the shared one."""
        return self.lockfile_path.parent / LOCAL_LOCKFILE_NAME

    def definition(self) -> Definition:
        """The definition as every operation sees it: var_files, variables and environment applied.

        The selected environment profile's var files come first, then ``var_files``, and its
        ``target_profile`` is merged into the targets, as SecretZero applies them (and records
        the var files in the lockfile: recording other var files than its run's would make
        SecretZero regenerate). A var file holding what the service
        guards (a target, a lockfile...) is refused before it is read (var_file_guard).
        """
        if self.var_files:
            return var_file_guard.guarded_definition(self, self._with_profile)
        # Inline, not through the guard: a deeply nested definition has few stack frames to spare.
        definition = self._load(())
        _, profile = definition.environments.resolve(self.environment)
        if profile is None or not (profile.var_files or profile.target_profile):
            return definition
        if profile.var_files:
            var_file_guard.check_var_files(self, profile.var_files, definition=definition)
        return self._load(profile.var_files, profile.target_profile)

    def lane(self) -> tuple[str | None, EnvironmentProfile | None]:
        """The environment in effect and its profile, read from the definition without var files."""
        return self._load(()).environments.resolve(self.environment)

    def _with_profile(self, var_files: Sequence[str]) -> Definition:
        definition = self._load(var_files)
        _, profile = definition.environments.resolve(self.environment)
        if profile is None or not (profile.var_files or profile.target_profile):
            return definition
        return self._load((*profile.var_files, *var_files), profile.target_profile)

    def _load(self, var_files: Sequence[str], target_profile: str | None = None) -> Definition:
        return load_definition(
            self.definition_path, var_files=var_files, variables=self.variables, environ=self.environ,
            max_bytes=self.max_definition_bytes, target_roots=tuple(self.target_roots or ()),
            limits=self.interpolation_limits, service_paths=self.service_paths, allow_scripts=self.allow_scripts,
            target_profile=target_profile,
        )

    def now(self) -> datetime:
        return self.clock()

    def target_locks(self, stripes: Iterable[int]) -> AbstractContextManager[None]:
        """Held by a write from before it writes its targets until its lockfile commit is done."""
        return stripe_locks(self.lockfile_path, stripes, timeout=self.lock_timeout, extra=self.extra_lock)

    def write_lock(self) -> AbstractContextManager[None]:
        """Held around every read-modify-write of the lockfile, inside the target locks.

        The file lock serializes the writers of one machine (threads, workers, the CLI); the
        extra lock, entered inside it, the instances on other machines.
        """
        path = Path(self.lockfile_path).absolute()
        extra = self.extra_lock(path, self.lock_timeout) if self.extra_lock is not None else None
        return lockfile_lock(path, timeout=self.lock_timeout, extra=extra)
