"""Where an operation runs: the definition, the lockfile and the engine's settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from secretsapi.service.definition.budget import InterpolationLimits
from secretsapi.service.definition.egress import Egress
from secretsapi.service.definition.model import Definition, EnvironmentProfile
from secretsapi.service.definition.status_plan import StatusPlan, plan_of
from secretsapi.service.definition.yaml_loader import MAX_BYTES
from secretsapi.service.errors import (
    DefinitionInvalid,
    DefinitionNotFound,
    EnvironmentNotFound,
    ServiceError,
    TargetError,
)
from secretsapi.service.loading.loader import load_definition, load_status_plan, lockfile_files
from secretsapi.service.loading.stored import DefinitionStore
from secretsapi.service.state import var_file_guard
from secretsapi.service.state.lock_state import LockfilePaths
from secretsapi.service.state.locks import ExtraLock
from secretsapi.service.state.write import Place
from secretsapi.service.targets.paths import named_file, refused_message

LOCKFILE_NAME = ".gitsecrets.lock"
DEFINITION_NAME = "Secretfile.yml"
# SecretZero's machine-local lockfile, beside the shared one, for secrets marked ``local: true``.
LOCAL_LOCKFILE_NAME = var_file_guard.LOCAL_LOCKFILE_NAME


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
    # ``var_files`` came with a request: each must be one the definition declares
    # (``environments.profiles.*.var_files``; var_file_guard.check_declared), not any file of its folder.
    declared_var_files_only: bool = False
    # The operator's rule for the server's credentials, identities and variables in this workspace's
    # operations (``definition.egress``): carried by its definition into every TargetContext.
    egress: Egress = field(default_factory=Egress)
    # Parsed definitions shared with other processes (``loading.loader.DefinitionStore``).
    definition_store: DefinitionStore | None = field(default=None, compare=False)

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
        try:
            definition: Definition | None = self._with_profile(self.var_files)
        except EnvironmentNotFound:
            raise  # no lockfile stands in for a lane that is not there
        except ServiceError:
            definition = None
        lane, profile = definition.environments.resolve(self.environment) if definition is not None else (None, None)
        if definition is not None and profile is not None and profile.lockfile:
            return self._confined_lockfile(profile.lockfile, definition, lane)
        return self._named_lockfile()

    def _named_lockfile(self) -> Path:
        folder = self.definition_path.parent
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
            return self._guarded_definition()
        # Inline, not through the guard: a deeply nested definition has few stack frames to spare.
        definition = self._load(())
        _, profile = definition.environments.resolve(self.environment)
        if profile is None or not (profile.var_files or profile.target_profile):
            return definition
        if profile.var_files:
            var_file_guard.check_var_files(self.guarded_files(), profile.var_files, definition=definition)
        return self._load(profile.var_files, profile.target_profile)

    def status_plan(self) -> StatusPlan:
        """``plan_of(self.definition())``, without building the definition when the shared store
        holds the plan (``loader.load_status_plan``). Var files and request variables go through
        the definition: the var file guard checks them against it."""
        if self.var_files or self.variables:
            return plan_of(self.definition())
        plan = self._load_plan(())
        _, profile = plan.environments.resolve(self.environment)
        if profile is None or not (profile.var_files or profile.target_profile):
            return plan
        if profile.var_files:
            return plan_of(self.definition())
        return self._load_plan((), profile.target_profile)

    def status_lockfiles(self, plan: StatusPlan) -> LockfilePaths:
        """``lockfiles`` for the definition ``plan`` came from: the file name rule needs no
        definition; a lane's own lockfile is confined against the definition (``lockfile_path``)."""
        if self.lockfile_override is not None or self.var_files or self.variables:
            return self.lockfiles
        _, profile = plan.environments.resolve(self.environment)
        if profile is not None and profile.lockfile:
            return self.lockfiles
        path = self._named_lockfile()
        return LockfilePaths(path, path.parent / LOCAL_LOCKFILE_NAME)

    def context(self) -> tuple[str | None, str | None]:
        """The definition's ``metadata.project`` and the environment in effect (what an audit
        row names), read from the shared plan without var files: no definition is built."""
        plan = self._load_plan(())
        return plan.project, plan.environments.resolve(self.environment)[0]

    def lane(self) -> tuple[str | None, EnvironmentProfile | None]:
        """The environment in effect and its profile, read from the definition without var files."""
        return self._load(()).environments.resolve(self.environment)

    def _guarded_definition(self) -> Definition:
        """The definition with ``var_files``, every var file checked: before the requested ones
        are read, against the definition without them, then against the definition they
        produce (they may move its targets)."""
        self._check_declared()
        try:
            before: Definition | None = self._with_profile(())
        except DefinitionInvalid:  # it may need the var files to be valid
            before = None
        var_file_guard.check_var_files(self.guarded_files(),
                                       (*_profile_var_files(before, self.environment), *self.var_files),
                                       definition=before)
        full = self._with_profile(self.var_files)
        var_file_guard.check_var_files(self.guarded_files(loaded=True),
                                       (*_profile_var_files(full, self.environment), *self.var_files), definition=full)
        return full

    def check_var_files_before_reading(self) -> None:
        """The requested var files checked against the definition without them (when it loads):
        for the operations that read var files themselves (render, validate)."""
        if not self.var_files:
            return
        self._check_declared()
        try:
            base: Definition | None = replace(self, var_files=()).definition()
        except (DefinitionInvalid, DefinitionNotFound):
            base = None
        var_file_guard.check_var_files(self.guarded_files(), self.var_files, definition=base)

    def guarded_files(self, *, loaded: bool = False) -> var_file_guard.GuardedFiles:
        """What a var file may not be (var_file_guard). Until the var files are ``loaded``, the
        lockfile is placed without them (placing it with them reads them)."""
        lockfiles = {replace(self, var_files=()).lockfile_path, *((self.lockfile_path,) if loaded else ())}
        return var_file_guard.GuardedFiles(self.definition_path, frozenset(lockfiles), self.service_paths,
                                           self.var_files_from_outputs)

    def _check_declared(self) -> None:
        """A request's var files are ones the definition declares, before any of them is read."""
        if self.var_files and self.declared_var_files_only:
            var_file_guard.check_declared(self.definition_path, self.var_files, self._declared_var_files())

    def _declared_var_files(self) -> list[str]:
        """Every lane's var files, from the definition without var files (or, when that does not
        load, its ``environments`` block as written)."""
        try:
            profiles = list(self._load(()).environments.profiles.values())
            return [given for profile in profiles for given in profile.var_files]
        except DefinitionInvalid:
            return var_file_guard.written_var_files(self.definition_path, self.max_definition_bytes)

    def _with_profile(self, var_files: Sequence[str]) -> Definition:
        if var_files:
            self._check_declared()
        definition = self._load(var_files)
        _, profile = definition.environments.resolve(self.environment)
        if profile is None or not (profile.var_files or profile.target_profile):
            return definition
        return self._load((*profile.var_files, *var_files), profile.target_profile)

    def _load(self, var_files: Sequence[str], target_profile: str | None = None) -> Definition:
        return load_definition(
            self.definition_path, var_files=var_files, variables=self.variables, environ=self.environ,
            max_bytes=self.max_definition_bytes, target_roots=tuple(self.target_roots or ()),
            limits=self.interpolation_limits, service_paths=self._own_files, allow_scripts=self.allow_scripts,
            target_profile=target_profile, store=self.definition_store, egress=self.egress,
        )

    def _load_plan(self, var_files: Sequence[str], target_profile: str | None = None) -> StatusPlan:
        return load_status_plan(
            self.definition_path, var_files=var_files, environ=self.environ,
            max_bytes=self.max_definition_bytes, target_roots=tuple(self.target_roots or ()),
            limits=self.interpolation_limits, service_paths=self._own_files, allow_scripts=self.allow_scripts,
            target_profile=target_profile, store=self.definition_store, egress=self.egress,
        )

    @property
    def _own_files(self) -> tuple[Path, ...]:
        """What no file a definition names (a local target, a source, a provider's file) may be:
        the service's data, the definition itself, and its lockfiles with their lock files (a
        lane's own lockfile is added by the loader, which reads the lanes)."""
        lockfiles = (self._named_lockfile(), *((self.lockfile_override,) if self.lockfile_override else ()))
        return (*self.service_paths, self.definition_path, *(p for f in lockfiles for p in lockfile_files(f)))

    def now(self) -> datetime:
        return self.clock()

    @property
    def lockfiles(self) -> LockfilePaths:
        return LockfilePaths(self.lockfile_path, self.local_lockfile_path)

    @property
    def write_place(self) -> Place:
        """What a write needs of these settings (``state.write``): it builds its own locks."""
        return Place(self.lockfiles, self.lock_timeout, self.extra_lock, self.allow_scripts, self.clock)


def _profile_var_files(definition: Definition | None, environment: str | None) -> tuple[str, ...]:
    profile = definition.environments.resolve(environment)[1] if definition is not None else None
    return profile.var_files if profile is not None else ()
