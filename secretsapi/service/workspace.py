"""Where an operation runs: the definition, the lockfile and the engine's settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

LOCKFILE_NAME = ".gitsecrets.lock"


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Workspace:
    definition_path: Path
    # None: `.gitsecrets.lock` beside the definition (one path for every operation).
    lockfile_override: Path | None = None
    allow_scripts: bool = False
    lock_timeout: float = 60.0
    # Days before the due date that count as "due"; None: min(7, period / 10).
    warning_days: int | None = None
    var_files: Sequence[str] = ()
    variables: Mapping[str, Any] | None = None
    environ: Mapping[str, str] | None = None
    clock: Callable[[], datetime] = field(default=utc_now)

    @property
    def lockfile_path(self) -> Path:
        return self.lockfile_override or self.definition_path.parent / LOCKFILE_NAME

    def now(self) -> datetime:
        return self.clock()
