"""Variable files that would hand back what the service guards, refused before anything uses them.

A var file's content becomes variables: render returns them, sync puts them into target paths,
ids and messages. So a var file may never be a file holding generated values or the service's
own state: a local target of the definition (as it renders without the requested var files, as
it renders with them, and as the lockfiles record it), the definition itself (its static
values), the lockfiles, the lock and temp files beside any of these, the lock stripe folder,
what the service writes elsewhere (``Workspace.service_paths``: its data folder, database), and
the files the definition's providers and sources read (a kubeconfig, a token file, the other
keys of a ``source: file``). The workspace places these files and loads the var files; this
module only compares paths. Paths are compared after resolving symlinks. SecretZero reads any
file: targets are allowed again by ``Workspace.var_files_from_outputs``
(SERVICE_VAR_FILES_FROM_OUTPUTS), never the rest.

A request names var files too, and for it a var file must also be one the definition declares
(``check_declared``): any YAML file of the folder is not a var file because a request says so.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from secretsapi.service.definition.model import Definition
from secretsapi.service.definition.var_files import resolve_var_file
from secretsapi.service.definition.yaml_loader import load_yaml, read_definition
from secretsapi.service.errors import ServiceError, VarFileInvalid, VarFileNotDeclared
from secretsapi.service.state.lockfile_io import read_lockfile
from secretsapi.service.state.locks import stripe_folder

# SecretZero's machine-local lockfile beside the shared one (workspace.LOCAL_LOCKFILE_NAME).
LOCAL_LOCKFILE_NAME = ".gitsecrets.local.lock"

RULE = ("a variable file may not be a target of the definition, the definition itself, a lockfile, "
        "a file a provider or a source reads, or a file the service writes (its values would be returned)")
OUTPUTS_SETTING = "SERVICE_VAR_FILES_FROM_OUTPUTS"
UNDECLARED_SETTING = "SERVICE_UNDECLARED_VAR_FILES"
DECLARED_RULE = ("a request may name only the var files its definition declares (environments.profiles.<name>."
                 f"var_files); {UNDECLARED_SETTING}=true lets requests name others, which every key that may "
                 "read can then read")
_TARGET = "a target of the definition"
# atomic_files' temp names: ``.<name>.<mkstemp's letters, digits and _>.tmp``.
_TEMP = re.compile(r"\.(?P<name>.+)\.[A-Za-z0-9_]+\.tmp")
_LOCAL_PATH_FIELDS = ("path", "output_path")
# Files a provider names that targets write: a git-crypt file holds values in plain text in the
# work tree (an Ansible Vault file is kept too: a wider net is only safer).
_PROVIDER_FILE_FIELDS = ("secret_file", "vault_file")
# Files a provider's client reads (a token file, a kubeconfig's bearer token, a CA bundle, a
# vault password): never a var file, whatever SERVICE_VAR_FILES_FROM_OUTPUTS says.
_PROVIDER_READ_FIELDS = ("token_file", "kubeconfig", "config_file", "ca_cert", "certificate_authority", "verify",
                         "password_file", "vault_password_file", "key_file")
_READ = "a file a provider or a source of the definition reads"


class _Protected:
    """Protected files and folders, as far as they can matter: a file is kept only when its
    base name is one the var files could be (``names``), so a definition with thousands of
    targets costs one string split per target; the few kept are resolved when compared."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.files: dict[str, list[tuple[str, str]]] = {}
        self.folders: list[tuple[Path, str]] = []

    def add_file(self, folder: Path, path: str, label: str) -> None:
        name = path.rpartition("/")[2]
        if name in self.names:
            self.files.setdefault(name, []).append((os.path.normpath(os.path.join(folder, path)), label))

    def add_index(self, index: Mapping[str, list[str]], label: str) -> None:
        for name in self.names:
            self.files.setdefault(name, []).extend((path, label) for path in index.get(name, ()))

    def add_folder(self, path: Path, label: str) -> None:
        self.folders.append((path, label))

    def reason(self, real: Path) -> str | None:
        for folder, label in self.folders:
            if real.is_relative_to(_real(folder)):
                return label
        direct = self._file_reason(real)
        if direct is not None:
            return direct
        for name in _covered(real.name):
            of = self._file_reason(real.with_name(name))
            if of is not None:
                return f"a lock or temp file of {of}"
        return None

    def _file_reason(self, real: Path) -> str | None:
        for path, label in self.files.get(real.name, ()):
            if _real(Path(path)) == real:
                return label
        return None


def _covered(name: str) -> tuple[str, ...]:
    """The file a lock sidecar (``<name>.lck``) or a temp file of atomic_files stands for: it
    holds the same."""
    temp = _TEMP.fullmatch(name)
    return ((name[:-4],) if name.endswith(".lck") else ()) + ((temp["name"],) if temp else ())


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop of links names no readable file
        return path


@dataclass(frozen=True)
class GuardedFiles:
    """What a var file may not be, as the workspace places it: plain paths and a setting."""

    definition_path: Path
    # The lockfiles (and so their local twins, lock files and stripe folders): where each is
    # without the requested var files and, once those are loaded, with them.
    lockfiles: frozenset[Path]
    service_paths: tuple[Path, ...] = ()  # Workspace.service_paths
    var_files_from_outputs: bool = False  # SERVICE_VAR_FILES_FROM_OUTPUTS


def check_declared(definition_path: Path, requested: Sequence[str], declared: Iterable[str]) -> None:
    """VarFileNotDeclared (naming the file and the rule) unless every ``requested`` var file is one of
    ``declared`` (the definition's ``environments.profiles.*.var_files``). Compared as written,
    after normalizing (``./a/../b``): nothing is looked up on the disk for a file that is refused,
    so a refusal tells nothing of what the folder holds."""
    folder = os.path.abspath(definition_path.parent)
    allowed = {os.path.normpath(os.path.join(folder, given)) for given in declared}
    for given in requested:
        if os.path.normpath(os.path.join(folder, given)) not in allowed:
            shown = given if len(given) <= 200 else given[:200] + "..."
            raise VarFileNotDeclared(f"variable file '{shown}' is not declared by the definition: {DECLARED_RULE}")


def written_var_files(definition_path: Path, max_bytes: int) -> list[str]:
    """The var files of every lane as the definition's ``environments`` block writes them, for a
    definition that does not load without var files; none when even its YAML does not parse."""
    try:
        doc = load_yaml(read_definition(definition_path, max_bytes), source=definition_path.name, max_bytes=max_bytes)
    except (ServiceError, OSError):
        return []
    environments = doc.get("environments") if isinstance(doc, Mapping) else None
    profiles = environments.get("profiles") if isinstance(environments, Mapping) else None
    found: list[str] = []
    for profile in profiles.values() if isinstance(profiles, Mapping) else ():
        given = profile.get("var_files") if isinstance(profile, Mapping) else None
        found += [item for item in given if isinstance(item, str)] if isinstance(given, list) else []
    return found


def check_var_files(
    files: GuardedFiles, var_files: Sequence[str], *, definition: Definition | None = None,
    paths: Iterable[str] = (), reads: Iterable[str] = (),
) -> None:
    """VarFileInvalid (naming the file and the rule) when one of ``var_files`` is protected;
    ``definition`` and ``paths`` (local target paths as written) add targets to the lockfiles',
    ``definition`` and ``reads`` (files providers and sources read, as written) the files read."""
    if not var_files:
        return
    folder = files.definition_path.parent
    reals = [(given, resolve_var_file(folder, given)) for given in var_files]
    names = {name for _, real in reals for name in (real.name, *_covered(real.name))}
    protected = _protected(files, names, definition, paths, reads)
    for given, real in reals:
        reason = protected.reason(real)
        if reason is not None:
            shown = given if len(given) <= 200 else given[:200] + "..."
            allow = (f"; {OUTPUTS_SETTING}=true allows targets (render and validate still withhold "
                     "their values)") if _TARGET in reason else ""
            raise VarFileInvalid(f"variable file '{shown}' is {reason}: {RULE}{allow}")


def _protected(
    files: GuardedFiles, names: set[str], definition: Definition | None, paths: Iterable[str], reads: Iterable[str],
) -> _Protected:
    protected = _Protected(names)
    folder = Path(os.path.abspath(files.definition_path.parent))
    protected.add_file(folder, str(files.definition_path), "the definition file")
    lockfiles = files.lockfiles | {path.with_name(LOCAL_LOCKFILE_NAME) for path in files.lockfiles}
    for lockfile in lockfiles:
        protected.add_file(folder, str(lockfile), "a lockfile")
        protected.add_folder(stripe_folder(lockfile), "a lock file of the service")
    for written in files.service_paths:
        if written.is_dir():
            # A data folder holding the definition would refuse every var file: its own
            # files are then protected one by one (service_paths names them too).
            if not folder.resolve().is_relative_to(_real(written)):
                protected.add_folder(written, "in the service's data folder")
        else:
            protected.add_file(folder, str(written), "a file the service writes")
    if not files.var_files_from_outputs:
        for lockfile in lockfiles:
            entries = read_lockfile(lockfile).raw_entries()
            protected.add_index(_INDEXES.get(entries, folder, functools.partial(_recorded_paths, entries)), _TARGET)
        if definition is not None:
            protected.add_index(_INDEXES.get(definition, folder, functools.partial(_definition_paths, definition)),
                                _TARGET)
        for target in paths:
            protected.add_file(folder, target, _TARGET)
    if definition is not None:
        protected.add_index(_INDEXES.get(definition, folder, functools.partial(_read_paths, definition), "reads"),
                            _READ)
    for read in reads:
        protected.add_file(folder, read, _READ)
    return protected


class _Indexes:
    """Base name -> normalized paths of the local files a definition or a lockfile names, kept
    for the last few of them (by identity; each is held, so its id is not reused): a request
    with var files then costs no walk over thousands of targets."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[int, Path, str], tuple[object, dict[str, list[str]]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, source: object, folder: Path, paths: Callable[[], Iterable[str]],
            kind: str = "targets") -> dict[str, list[str]]:
        key = (id(source), folder, kind)
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] is source:
                self._entries.move_to_end(key)
                return found[1]
        index: dict[str, list[str]] = {}
        for path in paths():
            index.setdefault(path.rpartition("/")[2], []).append(os.path.normpath(os.path.join(folder, path)))
        with self._lock:
            self._entries[key] = (source, index)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return index


_INDEXES = _Indexes(8)


def _recorded_paths(entries: Mapping[str, Any]) -> Iterable[str]:
    """Local file paths the lockfile records as targets (``<provider>/file/<path>``)."""
    for entry in entries.values():
        targets = entry.get("targets") if isinstance(entry, Mapping) else None
        for target_id in targets if isinstance(targets, Mapping) else ():
            parts = str(target_id).split("/", 2)
            if len(parts) == 3 and parts[1] == "file" and parts[2] and "\x00" not in parts[2]:
                yield parts[2]


def _definition_paths(definition: Definition) -> Iterable[str]:
    for secret in definition.secrets:
        targets = [*secret.targets, *(p.target for unit in secret.units for p in unit.placements)]
        for target in targets:
            # By kind alone (cheaper than the type, and a wider net is only safer).
            if target.kind in ("file", "template"):
                for field in _LOCAL_PATH_FIELDS:
                    value = target.config.get(field)
                    if isinstance(value, str) and value and "\x00" not in value:
                        yield value
    yield from _provider_paths(definition)


def _provider_paths(definition: Definition, fields: tuple[str, ...] = _PROVIDER_FILE_FIELDS) -> Iterable[str]:
    for spec in definition.providers.values():
        auth = spec.auth if isinstance(spec.auth, Mapping) else {}
        for options in (spec.config, auth, auth.get("config")):
            for field in fields:
                value = options.get(field) if isinstance(options, Mapping) else None
                if isinstance(value, str) and value and "\x00" not in value:
                    yield value


def _read_paths(definition: Definition) -> Iterable[str]:
    """The files the definition's providers read for credentials and its sources read values from."""
    yield from _provider_paths(definition, _PROVIDER_READ_FIELDS)
    for secret in definition.secrets:
        # ``source: {kind: file}``: its other keys are the same file's (another secret's input).
        for unit in secret.units:
            source = unit.generator.source
            path = source.config.get("path") if source is not None and source.kind == "file" else None
            if isinstance(path, str) and path and "\x00" not in path:
                yield path


def rendered_reads(config: Any) -> list[str]:
    """Files a rendered definition's providers and sources read: every ``_PROVIDER_READ_FIELDS``
    value anywhere, and every ``path`` of a ``source`` (more is safer)."""
    found: list[str] = []
    stack = [config]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            for key, item in value.items():
                if key in _PROVIDER_READ_FIELDS and isinstance(item, str) and "\x00" not in item:
                    found.append(item)
                elif key == "source" and isinstance(item, Mapping) and isinstance(item.get("config"), Mapping):
                    path = item["config"].get("path")
                    if isinstance(path, str) and "\x00" not in path:
                        found.append(path)
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
    return found


def rendered_paths(config: Any) -> list[str]:
    """Local target paths in a rendered definition (render's output, before redaction): every
    ``path`` or ``output_path`` in any ``targets`` list, whatever its provider, and every
    ``secret_file`` or ``vault_file`` anywhere (more is safer)."""
    found: list[str] = []
    stack = [config]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            for key, item in value.items():
                if key == "targets" and isinstance(item, list):
                    for target in item:
                        options = target.get("config") if isinstance(target, Mapping) else None
                        if isinstance(options, Mapping):
                            found += [str(options[f]) for f in _LOCAL_PATH_FIELDS
                                      if isinstance(options.get(f), str) and "\x00" not in options[f]]
                elif key in _PROVIDER_FILE_FIELDS and isinstance(item, str) and "\x00" not in item:
                    found.append(item)
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
    return found
