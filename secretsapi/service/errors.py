"""Exceptions raised by the engine, each with a stable ``code``.

Messages are written for users and never contain secret values: the API layer
may show them, so whoever raises one must keep values out of the text.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any


class ServiceError(Exception):
    """Base class; ``code`` is stable and mapped to an HTTP status by the API layer."""

    code = "service_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # Errors cross from engine processes to the server's workers by pickle. The default
        # rebuilds an exception as ``cls(*args)``, which breaks every subclass whose __init__
        # takes other arguments than the message (DefinitionInvalid, SecretNotDefined...):
        # rebuild it without calling __init__, with its args and attributes as they are.
        return (_rebuild, (type(self), self.args, self.__dict__))


def _rebuild(cls: type[ServiceError], args: tuple[Any, ...], state: dict[str, Any]) -> ServiceError:
    error = cls.__new__(cls, *args)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class DefinitionNotFound(ServiceError):
    code = "definition_not_found"


class DefinitionInvalid(ServiceError):
    """The definition file cannot be loaded: bad YAML, bad structure or bad values."""

    code = "definition_invalid"

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(self.errors) or "definition is invalid")


class SecretNotDefined(ServiceError):
    code = "secret_not_defined"

    def __init__(self, name: str, known: Iterable[str] = ()) -> None:
        """``known``: the names the definition declares, for a did-you-mean (names, never values)."""
        self.name = name
        close = difflib.get_close_matches(name, list(known), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        super().__init__(f"secret '{name}' is not defined in the definition file{hint}")


class EnvironmentNotFound(ServiceError):
    """An environment was named that the definition's ``environments.profiles`` lacks."""

    code = "environment_not_found"

    def __init__(self, name: str, known: Sequence[str], *, has_map: bool = True) -> None:
        self.name = name
        self.known = sorted(known)
        if has_map:
            listed = ", ".join(self.known) or "[none]"
            message = f"Unknown environment '{name}'. Known environments: {listed}"
        else:
            message = f"environment '{name}' given, but the definition has no top-level environments map"
        super().__init__(message)


class VarFileNotFound(ServiceError):
    code = "var_file_not_found"


class VarFileNotDeclared(VarFileNotFound):
    """A request named a var file its definition does not declare: not one it may read, as absent
    as a missing one (and answered without looking at the disk)."""

    code = "var_file_not_declared"


class VarFileInvalid(ServiceError):
    """A variable file escapes the definition folder or is not a YAML mapping."""

    code = "var_file_invalid"


class LockfileUnreadable(ServiceError):
    """The lockfile exists but is not valid JSON of the expected shape; never overwritten."""

    code = "lockfile_unreadable"


class LockEntryCorrupted(ServiceError):
    code = "lock_entry_corrupted"

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"lockfile entry '{name}' is corrupted: {reason}")


class GeneratorError(ServiceError):
    """A generator cannot produce a value (bad options, scripts disabled, script failed)."""

    code = "generator_error"


class TargetError(ServiceError):
    """A target cannot be written or read."""

    code = "target_error"


class ValueReadDisabled(ServiceError):
    """Reading secret values over the API is switched off (the default)."""

    code = "value_read_disabled"


class LockTimeout(ServiceError):
    """Another writer held the lockfile lock for longer than the timeout."""

    code = "lock_timeout"


class LockLost(ServiceError):
    """A lock held across instances (a database advisory lock) was lost while a write held it:
    another instance may be writing, so the write stopped with nothing more changed.
    ``details``: audit facts (how many targets took new values before it stopped)."""

    code = "lock_lost"

    def __init__(self, message: str, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.details = dict(details or {})


class LockfileUnwritable(ServiceError):
    """The lockfile (or its temp file) cannot be written: a read-only file system, no
    permission, an I/O error. ``details``: audit facts (names, counts), e.g. which targets a
    write changed before the lockfile failed."""

    code = "lockfile_unwritable"

    def __init__(self, message: str, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.details = dict(details or {})


class LockfileStorageFull(LockfileUnwritable):
    """The lockfile cannot be written because its disk (or the user's quota) is full."""

    code = "disk_full"


class WorkerDied(ServiceError):
    """The worker process running a job ended before the job did (killed, out of memory).

    A write may have written some targets (each whole: writes are atomic) without its
    lockfile commit, exactly as after a server crash: a drift check says what changed.
    """

    code = "worker_died"
