"""A previous token that could not be revoked at its source is in the rotation's audit row (its
kind, id and owner: never a token), and the row is not a success."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.models import AuditEntry
from secretsapi.actions import writes
from tests.peers.gitlab_tokens_server import GitLabTokenServer
from tests.service.generators.test_gitlab_project_token import _held, _workspace


@pytest.mark.server
@pytest.mark.django_db
def test_a_failed_revoke_is_in_the_rotation_row_without_any_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GITLAB_TOKEN", "GITLAB_PRIVATE_TOKEN", "GITLAB_URL", "CI_SERVER_URL", "GITLAB_CI"):
        monkeypatch.delenv(name, raising=False)
    with GitLabTokenServer() as gitlab:
        gitlab.add("projects", "team/app")
        ws = _workspace(tmp_path, gitlab)
        writes.sync(ws, actor="test")
        old = _held(tmp_path)
        gitlab.refuse_deletes = True
        writes.execute_rotation(ws, actor="test", force=True)
        new = _held(tmp_path)
    row = AuditEntry.objects.filter(action="execute_rotation").get()
    assert row.success is False
    [error] = row.details["errors"]
    old_id = next(t["id"] for t in gitlab.tokens.values() if t["token"] == old)
    assert f"(id {old_id}) of team/app could not be revoked: " in error["message"]
    assert "permission denied (403)" in error["message"]
    stored = json.dumps([row.details for row in AuditEntry.objects.all()])
    assert old not in stored and new not in stored
