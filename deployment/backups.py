"""Backups that restore: the database, the data folder, the definition's folder (its lockfiles and
local targets), the lockfile and target roots named apart, in one tar.gz with a manifest.

A restore goes into an empty install (no key, audit row, job, user...: nothing but what a first
start writes) and puts each file where this install's settings say (SERVICE_DATA_DIR, the
folder of SERVICE_CONFIG, SERVICE_LOCKFILE, SERVICE_TARGET_ROOTS), so the backup of one host
restores on another with other paths. A file already there with other content stops the
restore before anything is written; every file's SHA-256 is checked as it is read back.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from django.conf import settings
from django.core.management import call_command

from audit import recorder
from deployment import database_copy
from deployment.archive import (
    ArchiveError,
    conflict,
    new_private_file,
    open_source,
    restore_file,
    safe_relative,
    sha256_of,
    walk,
)
from secretsapi import __version__

FORMAT = "secretsapi-backup"
VERSION = 1
# The database's own files in the data folder: the database goes in through database_copy.
_DATABASE_SUFFIXES = ("", "-wal", "-shm", "-journal", ".audit.lck")


@dataclass
class Summary:
    """What a backup took or a restore wrote, for the command's report (names and counts only)."""

    database: str = ""
    files: dict[str, int] = field(default_factory=dict)
    links_skipped: list[str] = field(default_factory=list)


def _roots() -> dict[str, Path]:
    """Each folder (or file, for ``lockfile``) a backup takes, by role, from this install's settings."""
    definition = Path(settings.SERVICE_CONFIG).parent
    roots = {"data": Path(settings.DATA_DIR), "definition": definition}
    if settings.SERVICE_LOCKFILE is not None:
        roots["lockfile"] = Path(settings.SERVICE_LOCKFILE)
    for index, root in enumerate(settings.SERVICE_TARGET_ROOTS):
        roots[f"root{index}"] = Path(root)
    return roots


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _skipped_paths() -> tuple[Path, ...]:
    data = Path(settings.DATA_DIR)
    skip = [data / "cache"]
    if database_copy.vendor() == "sqlite":
        database = database_copy.sqlite_path()
        skip += [database.with_name(database.name + suffix) for suffix in _DATABASE_SUFFIXES]
    return tuple(skip)


def _collect() -> tuple[dict[str, list[tuple[str, Path]]], list[str]]:
    """The files of each role. A folder inside (or equal to) an earlier role's is taken by that
    one; a folder skips the other roles' folders inside it."""
    roots = _roots()
    skip = _skipped_paths()
    taken: dict[str, list[tuple[str, Path]]] = {}
    links: list[str] = []
    folders = [(role, path) for role, path in roots.items() if role != "lockfile"]
    for index, (role, root) in enumerate(folders):
        if not root.is_dir() or any(_inside(root, earlier) for _, earlier in folders[:index]):
            continue
        inner = tuple(other for _, other in folders if _inside(other, root) and other.resolve() != root.resolve())
        found, met = walk(root, skip=skip + inner)
        taken[role] = [(each.relative, each.path) for each in found]
        links += met
    lockfile = roots.get("lockfile")
    if lockfile is not None and lockfile.is_file() and not any(_inside(lockfile, path) for _, path in folders):
        taken["lockfile"] = [(lockfile.name, lockfile)]
    return taken, links


def _add(archive: tarfile.TarFile, name: str, handle: BinaryIO, size: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o600, int(datetime.now(UTC).timestamp())
    archive.addfile(info, handle)


def backup(destination: Path, *, actor: str) -> Summary:
    """Write the backup to ``destination`` (a new file, 0600); its audit row goes in first."""
    destination = destination.absolute()
    taken, links = _collect()
    files = {role: len(entries) for role, entries in taken.items()}
    recorder.record(action="backup", resource=str(destination), user=actor, success=True,
                    details={"database": database_copy.vendor(), "files": files})
    summary = Summary(database=database_copy.vendor(), files=files, links_skipped=links)
    manifest: dict[str, Any] = {
        "format": FORMAT, "version": VERSION, "created_at": datetime.now(UTC).isoformat(),
        "service_version": __version__, "sources": {role: str(path) for role, path in _roots().items()},
        "database": {"vendor": database_copy.vendor(), "migrations": database_copy.applied_migrations()},
        "files": [],
    }
    with tempfile.TemporaryDirectory(prefix=".backup-", dir=settings.DATA_DIR) as scratch, \
            new_private_file(destination) as output, tarfile.open(fileobj=output, mode="w:gz") as archive:
        if database_copy.vendor() == "sqlite":
            copy, member = Path(scratch) / "service.sqlite3", "database/service.sqlite3"
            database_copy.copy_sqlite(copy)
        else:
            copy, member = Path(scratch) / "data.json", "database/data.json"
            database_copy.dump_fixture(copy)
        manifest["database"]["member"] = member
        with open_source(copy) as handle:
            manifest["database"]["sha256"] = sha256_of(handle)
            _add(archive, member, handle, copy.stat().st_size)
        for role, entries in taken.items():
            for relative, path in entries:
                with open_source(path) as handle:
                    digest = sha256_of(handle)
                    size = path.lstat().st_size
                    _add(archive, f"files/{role}/{relative}", handle, size)
                manifest["files"].append({"role": role, "path": relative, "sha256": digest, "size": size})
        text = json.dumps(manifest, indent=2).encode()
        _add(archive, "manifest.json", io.BytesIO(text), len(text))
    return summary


def _destination(role: str, sources: dict[str, str]) -> Path:
    """Where this install keeps what the backup took as ``role`` (its original place otherwise)."""
    roots = _roots()
    if role in roots:
        return roots[role].parent if role == "lockfile" else roots[role]
    original = Path(sources[role])
    return original.parent if role == "lockfile" else original


def _read_manifest(archive: tarfile.TarFile) -> dict[str, Any]:
    try:
        member = archive.extractfile("manifest.json")
    except KeyError:
        member = None
    if member is None:
        raise ArchiveError("not a backup of this service: no manifest.json")
    manifest: dict[str, Any] = json.loads(member.read())
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise ArchiveError(f"not a backup this version restores (format {manifest.get('format')!r}, "
                           f"version {manifest.get('version')!r})")
    return manifest


def _member(archive: tarfile.TarFile, name: str, sha256: str) -> BinaryIO:
    """A regular member's content, checked against the manifest's SHA-256."""
    try:
        info = archive.getmember(name)
    except KeyError:
        raise ArchiveError(f"the backup lacks {name}") from None
    handle = archive.extractfile(info) if info.isreg() else None
    if handle is None:
        raise ArchiveError(f"the backup's {name} is not a regular file")
    if sha256_of(handle) != sha256:  # type: ignore[arg-type]
        raise ArchiveError(f"the backup's {name} is damaged (its SHA-256 differs from the manifest's)")
    return handle  # type: ignore[return-value]


def restore(source: Path, *, actor: str) -> Summary:
    """Restore ``source`` into this (empty) install; nothing is written if any check fails."""
    held = database_copy.rows_held()
    if held:
        listed = ", ".join(f"{label} ({count})" for label, count in sorted(held.items()))
        raise ArchiveError(f"this install is not empty ({listed}): restore into a new database (and folders)")
    try:
        archive = tarfile.open(source, mode="r:gz")  # noqa: SIM115 - closed by the `with` below
    except (OSError, tarfile.TarError) as exc:
        raise ArchiveError(f"cannot read {source} as a backup: {exc}") from None
    with archive:
        manifest = _read_manifest(archive)
        database = manifest["database"]
        if database["vendor"] == "sqlite" and database_copy.vendor() != "sqlite":
            raise ArchiveError("this backup holds an SQLite database: restore it onto SQLite (DATABASE_URL unset or "
                               "sqlite://...)")
        plan = [(entry, _destination(entry["role"], manifest["sources"]), safe_relative(entry["path"]))
                for entry in manifest["files"]]
        # A key this empty install generated when it first started is replaced by the backup's.
        conflicts = [found for entry, root, relative in plan
                     if (entry["role"], entry["path"]) != ("data", "secret_key")
                     and (found := conflict(root, relative, entry["sha256"])) is not None]
        if conflicts:
            raise ArchiveError("nothing was restored: " + "; ".join(conflicts[:10])
                               + (f" (and {len(conflicts) - 10} more)" if len(conflicts) > 10 else ""))
        handle = _member(archive, database["member"], database["sha256"])
        with tempfile.TemporaryDirectory(prefix=".restore-", dir=_scratch_folder()) as scratch:
            copy = Path(scratch) / PurePosixPath(database["member"]).name
            with open(copy, "xb") as out:
                shutil.copyfileobj(handle, out)
            if database["vendor"] == "sqlite":
                database_copy.restore_sqlite(copy)
            else:
                database_copy.load_fixture(copy, database["migrations"])
        # A backup of an older version: its database is brought up to this one.
        call_command("migrate", interactive=False, verbosity=0)
        summary = Summary(database=database["vendor"])
        for entry, root, relative in plan:
            restore_file(root, relative, _member(archive, f"files/{entry['role']}/{entry['path']}", entry["sha256"]))
            summary.files[entry["role"]] = summary.files.get(entry["role"], 0) + 1
    recorder.record(action="restore", resource=str(source.absolute()), user=actor, success=True,
                    details={"database": database["vendor"], "files": summary.files,
                             "backup_created_at": manifest["created_at"]})
    return summary


def _scratch_folder() -> Path:
    folder = Path(settings.DATA_DIR)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder
