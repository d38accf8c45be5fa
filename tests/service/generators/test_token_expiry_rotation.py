"""A token is rotated before it expires at its source: a rotation check counts the recorded
expiry as a due date when it comes before the rotation period's, and a scheduled rotation
(unforced) then replaces the token."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

from secretsapi.service.rotation import check_rotation, execute_rotation
from secretsapi.service.sync import sync
from secretsapi.service.workspace import utc_now
from tests.factories import workspace
from tests.peers.gitlab_tokens_server import GitLabTokenServer
from tests.service.generators.test_gitlab_project_token import _held, gitlab_provider, token_secret


def test_a_token_expiring_before_its_rotation_period_falls_due_by_its_expiry(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    secret = {**token_secret(expires_in_days=30), "rotation_period": "90d"}
    ws = workspace(tmp_path, {"gitlab": gitlab_provider(gitlab.url)}, secret)
    sync(ws)
    assert check_rotation(ws).secrets_due == []
    later = dataclasses.replace(ws, clock=lambda: utc_now() + timedelta(days=29))
    status = check_rotation(later)
    assert status.secrets_due == ["ci_deploy_token"] and "its token expires then" in status.results[0].status
    old = _held(tmp_path)
    assert execute_rotation(later).rotated == ["ci_deploy_token"]
    assert _held(tmp_path) != old and not gitlab.active(old)


def test_a_rotation_period_shorter_than_the_token_lifetime_decides_alone(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    secret = {**token_secret(expires_in_days=90), "rotation_period": "30d"}
    ws = workspace(tmp_path, {"gitlab": gitlab_provider(gitlab.url)}, secret)
    sync(ws)
    status = check_rotation(dataclasses.replace(ws, clock=lambda: utc_now() + timedelta(days=31)))
    assert status.secrets_overdue == ["ci_deploy_token"] and "token" not in status.results[0].status
