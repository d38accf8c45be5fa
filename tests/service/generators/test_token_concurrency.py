"""Rotations of one token secret racing each other (threads of one worker, as two jobs run):
every rotation's token but the last is revoked, and the one left is the one the targets hold."""

from __future__ import annotations

import threading
from pathlib import Path

from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from tests.peers.gitlab_tokens_server import GitLabTokenServer
from tests.service.generators.test_gitlab_project_token import _held, _workspace

ROUNDS = 3


def test_racing_rotations_leave_one_active_token_the_one_every_target_holds(
    tmp_path: Path, gitlab: GitLabTokenServer
) -> None:
    ws = _workspace(tmp_path, gitlab)
    sync(ws)
    failures: list[object] = []

    def rotate() -> None:
        for _ in range(ROUNDS):
            result = execute_rotation(ws, force=True)
            failures.extend(result.errors)

    threads = [threading.Thread(target=rotate) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    made = gitlab.token_named("secretzero-ci-deploy")
    assert len(made) == 1 + 2 * ROUNDS
    active = [t["token"] for t in made if gitlab.active(t["token"])]
    held = _held(tmp_path)
    assert active == [held]
    assert (gitlab.variable("projects", "team/app", "ci_deploy_token") or {})["value"] == held
