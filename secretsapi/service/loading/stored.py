"""Parsed definitions shared between processes: what a store keeps, its key, and when an entry serves.

A process parses its definition once (``loader``'s own cache); a command line run is a new
process each time, and for 20,000 secrets the parse was most of ``manage.py status``. The
interface supplies a store (the Django project's is a cache of its framework); this module
decides what may go in it and when what comes out of it is still the parse it would make.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import jinja2
import yaml

from secretsapi.service.definition.model import Definition
from secretsapi.service.definition.status_plan import StatusPlan, plan_of
from secretsapi.service.definition.var_files import resolve_var_file
from secretsapi.service.definition.yaml_loader import read_definition
from secretsapi.service.errors import ServiceError
from secretsapi.service.generators import STATIC_KINDS

# Bumped when what a parse makes changes in a way the code fingerprint cannot see.
_STORE_FORMAT = "4"
_SERVICE_ROOT = Path(__file__).resolve().parent.parent
_code_key: str | None = None


@dataclass(frozen=True)
class StoredParse:
    """What the store keeps of one parse: the definition, and every environment variable name
    the parse looked up (each unset at the time: a parse that found one is not stored)."""

    definition: Definition
    unset: frozenset[str]


@dataclass(frozen=True)
class StoredPlan:
    """What a status reads of the same parse (``definition.status_plan``), stored beside it."""

    plan: StatusPlan
    unset: frozenset[str]


Parse = Callable[[Mapping[str, str], str], Definition]


class DefinitionStore(Protocol):
    """A cache shared between processes of parses (``StoredParse``, ``StoredPlan``) and of lockfile
    indexes (``state.status_index``). Keys are content hashes; ``get`` answers None for anything it
    cannot give back (absent, unreadable, stale); callers check the type of what it gives."""

    def get(self, key: str) -> object | None: ...

    def has(self, key: str) -> bool: ...

    def set(self, key: str, value: object) -> None: ...


def load(
    store: DefinitionStore, path: Path, var_files: Sequence[str], env: Mapping[str, str], max_bytes: int,
    settings: str, parse: Parse,
) -> Definition:
    """The definition from ``store`` when an earlier process parsed the same inputs, else
    ``parse(environment, text)`` (stored, with its plan, if the parse took nothing from the environment).

    The key is a SHA-256 of the definition's bytes, each var file's real path and bytes,
    ``settings`` (what the result carries: the loader's key without stats and environment) and
    this code with its libraries (``code_fingerprint``). The environment is the rest of the
    input: the parse is stored with the names it looked up (``${NAME}``, each secret's
    upper-case override, ``env`` sources), and an entry serves only while every one of them is
    still unset, so setting any of them means parsing again. A parse that found one set is never
    stored: the result holds its value, and the store is on disk. Nor is one that holds a value
    written in the definition (``holds_values``: a static secret, a provider's credential); its
    status plan, which holds none, is.
    """
    text = read_definition(path, max_bytes)
    return _definition(store, _key(text, path, var_files, settings), text, env, parse)[0]


def load_plan(
    store: DefinitionStore, path: Path, var_files: Sequence[str], env: Mapping[str, str], max_bytes: int,
    settings: str, parse: Parse,
) -> StatusPlan:
    """``plan_of`` the definition ``load`` would give, read from ``store`` when stored for these
    inputs (under the same key and rule), else derived and stored beside the parse."""
    text = read_definition(path, max_bytes)
    digest = _key(text, path, var_files, settings)
    if digest is not None:
        found = store.get(digest + _PLAN)
        if isinstance(found, StoredPlan) and found.unset.isdisjoint(env.keys()):
            return found.plan
    definition, unset = _definition(store, digest, text, env, parse)
    plan = plan_of(definition)
    if digest is not None and unset is not None:
        store.set(digest + _PLAN, StoredPlan(plan, unset))
    return plan


_PLAN = ":status-plan"


def _definition(
    store: DefinitionStore, digest: str | None, text: str, env: Mapping[str, str], parse: Parse,
) -> tuple[Definition, frozenset[str] | None]:
    """The definition, and the environment names it looked up when it may be stored (None: it
    took a value, or a var file could not be read)."""
    if digest is not None:
        found = store.get(digest)
        if isinstance(found, StoredParse) and found.unset.isdisjoint(env.keys()):
            return found.definition, found.unset
    watched = _Watched(env)
    definition = parse(watched, text)
    if digest is None or watched.took:
        return definition, None
    unset = frozenset(watched.names)
    if not holds_values(definition):
        store.set(digest, StoredParse(definition, unset))
    # The plan beside it: the status after a sync (which parsed) reads it without this parse.
    store.set(digest + _PLAN, StoredPlan(plan_of(definition), unset))
    return definition, unset


def holds_values(definition: Definition) -> bool:
    """Whether the parse holds a value the store must never keep: a static secret's value (or
    default), written in the definition or a var file, or a provider's credential (what the
    provider listing redacts: credential-like keys, URL user info, any auth setting)."""
    for secret in definition.secrets:
        for unit in secret.units:
            options = unit.generator.config
            if unit.generator.kind in STATIC_KINDS and any(options.get(key) for key in ("value", "default")):
                return True
    if not definition.providers:
        return False
    # Imported here: a parse without providers never needs it.
    from secretsapi.service.targets.redaction import redacted_config

    for spec in definition.providers.values():
        auth = spec.auth if isinstance(spec.auth, Mapping) else {}
        settings = {**{k: v for k, v in auth.items() if k not in ("kind", "config")},
                    **(auth["config"] if isinstance(auth.get("config"), Mapping) else {})}
        if settings or redacted_config(spec.config) != dict(spec.config):
            return True
    return False


def _key(text: str, path: Path, var_files: Sequence[str], settings: str) -> str | None:
    """None when a var file cannot be read here (the parse then says why, and nothing is stored)."""
    h = hashlib.sha256()

    def part(data: bytes) -> None:  # length-prefixed, so no two sequences of parts collide
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)

    part(code_fingerprint().encode())
    part(settings.encode("utf-8", "surrogatepass"))
    part(text.encode("utf-8", "surrogatepass"))
    for given in var_files:
        try:
            real = resolve_var_file(path.parent, given)
            part(str(real).encode("utf-8", "surrogatepass"))
            part(real.read_bytes())
        except (OSError, ServiceError):
            return None
    return "definition:" + h.hexdigest()


def code_fingerprint() -> str:
    """What parses a definition, as of this process: the service's modules (name, size, mtime),
    the versions of Python, PyYAML and Jinja (interpolation). A changed parser makes every stored
    definition stale."""
    global _code_key
    if _code_key is None:
        h = hashlib.sha256(f"{_STORE_FORMAT} {sys.version} {yaml.__version__} {jinja2.__version__}".encode())
        for module in sorted(_SERVICE_ROOT.rglob("*.py")):
            st = module.stat()
            h.update(f"{module.relative_to(_SERVICE_ROOT)} {st.st_size} {st.st_mtime_ns}\n".encode())
        _code_key = h.hexdigest()
    return _code_key


class _Watched(Mapping[str, str]):
    """The environment as a parse sees it: every name it looks up (``names``), and whether any
    answer depended on a variable being set (``took``; iterating counts, it may read them all)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        self.names: set[str] = set()
        self.took = False

    def _seen(self, key: object, present: bool) -> None:
        if isinstance(key, str):
            self.names.add(key)
        self.took = self.took or present or not isinstance(key, str)

    def __getitem__(self, key: str) -> str:
        try:
            value = self._environ[key]
        except KeyError:
            self._seen(key, False)
            raise
        self._seen(key, True)
        return value

    def __contains__(self, key: object) -> bool:
        present = key in self._environ
        self._seen(key, present)
        return present

    def __iter__(self) -> Iterator[str]:
        self.took = True
        return iter(self._environ)

    def __len__(self) -> int:
        self.took = True
        return len(self._environ)

