"""A disk that fills up (or a lockfile that cannot be written) never costs the current values: a
write stages its lockfile before it touches a target, fails with a clear error (507 when the
disk is full) and changes nothing; and when targets were changed, the audit row names them
(issue 18, point 8)."""

from __future__ import annotations

import errno
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from audit.models import AuditEntry
from secretsapi.management.base import Failure
from secretsapi.service.state import lockfile_io
from secretsapi.service.util import atomic_files
from tests.asserts import assert_error_body
from tests.factories import Project, definition, file_secret, target


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not p.name.endswith(".lck")}


def _fail_writes(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """Every file write fails as the kernel fails it on a full (or read-only...) disk."""
    def failing(fd: int, data: bytes | bytearray) -> int:
        raise OSError(code, "simulated")

    monkeypatch.setattr(atomic_files, "_write_all", failing)


@pytest.fixture
def synced(authed_api: APIClient, project: Project) -> Project:
    project.write(definition(file_secret("db", "out/app.env"), file_secret("api", "out/api.json")))
    assert authed_api.post("/sync", {}, format="json").status_code == 200
    return project


def _last_sync() -> AuditEntry:
    row = AuditEntry.objects.filter(action="sync").first()
    assert row is not None
    return row


def test_a_forced_sync_on_a_full_disk_answers_507_and_changes_no_target(
    authed_api: APIClient, synced: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _files(synced.root)
    _fail_writes(monkeypatch, errno.ENOSPC)
    response = authed_api.post("/sync", {"force": True}, format="json")
    body = assert_error_body(response, 507)
    assert body["error"] == "Insufficient storage"
    assert "the disk is full" in body["detail"] and "no target was changed" in body["detail"]
    assert _files(synced.root) == before  # targets and lockfile byte for byte, no temp file left
    row = _last_sync()
    assert (row.success, row.details["error"]) == (False, "disk_full")


def test_a_quota_exceeded_is_a_full_disk_too(
    authed_api: APIClient, synced: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_writes(monkeypatch, errno.EDQUOT)
    assert_error_body(authed_api.post("/sync", {"force": True}, format="json"), 507)


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.EIO])
def test_a_lockfile_that_cannot_be_written_is_a_named_500_and_changes_no_target(
    authed_api: APIClient, synced: Project, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    before = _files(synced.root)
    _fail_writes(monkeypatch, code)
    body = assert_error_body(authed_api.post("/sync", {"force": True}, format="json"), 500)
    assert body["error"] == "Lockfile not writable"
    assert "cannot be written" in body["detail"] and "no target was changed" in body["detail"]
    assert _files(synced.root) == before
    assert _last_sync().details["error"] == "lockfile_unwritable"


def test_a_rotation_on_a_full_disk_changes_no_target(
    authed_api: APIClient, synced: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _files(synced.root)
    _fail_writes(monkeypatch, errno.ENOSPC)
    assert_error_body(authed_api.post("/rotation/execute", {"force": True}, format="json"), 507)
    assert _files(synced.root) == before


@pytest.mark.django_db
def test_the_cli_reports_a_full_disk_as_a_json_error(synced: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _files(synced.root)
    _fail_writes(monkeypatch, errno.ENOSPC)
    out = StringIO()
    with pytest.raises(Failure):
        call_command("sync", "--force", "--json", stdout=out)
    body = json.loads(out.getvalue())
    assert body["error"] == "disk_full" and "no target was changed" in body["detail"]
    assert _files(synced.root) == before


def test_a_lockfile_that_fails_after_the_targets_were_written_names_them_in_the_audit_row(
    authed_api: APIClient, synced: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = lockfile_io.StagedLockfile.commit

    def rename_fails(self: lockfile_io.StagedLockfile) -> None:
        # Staged fine and the targets are written: now the lockfile's rename fails.
        def failing() -> None:
            raise OSError(errno.EIO, "simulated")

        monkeypatch.setattr(self._file, "commit", failing)
        real(self)

    monkeypatch.setattr(lockfile_io.StagedLockfile, "commit", rename_fails)
    body = assert_error_body(authed_api.post("/sync", {"force": True}, format="json"), 500)
    assert "2 target(s) now hold new values the lockfile does not record" in body["detail"]
    row = _last_sync()
    assert row.details["error"] == "lockfile_unwritable"
    assert row.details["written_targets"] == {"db": ["local/file/out/app.env"], "api": ["local/file/out/api.json"]}


def test_a_target_that_fails_half_way_leaves_an_audit_row_naming_what_was_written(
    authed_api: APIClient, project: Project
) -> None:
    (project.root / "busy").mkdir()  # a folder where a file should be: that target fails
    secret = {"name": "db", "kind": "random_password",
              "targets": [target("local", "file", path="out/app.env"), target("local", "file", path="busy")]}
    project.write(definition(secret, file_secret("fine", "out/fine.env")))
    response = authed_api.post("/sync", {}, format="json")
    assert response.status_code == 200 and response.json()["secrets_generated"] == ["db", "fine"]
    row = _last_sync()
    assert row.success is False
    assert row.details["written_targets"] == {"db": ["local/file/out/app.env"]}  # only the partial secret
    # The staged lockfile was rewritten in place with what was really written, then renamed.
    assert list(project.lock()["secrets"]["db"]["targets"]) == ["local/file/out/app.env"]
