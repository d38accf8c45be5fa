"""The stores every target kind writes to, at once: the peer fixtures of tests/service/targets
(imported, so both folders use the same ones), and the project folder as an unlocked git-crypt
repository with an Ansible Vault password file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.factories import git_crypt_repository
from tests.service.targets.conftest import (  # noqa: F401 (fixtures, found by pytest by name)
    aws,
    clean_sdk_env,
    github,
    gitlab,
    infisical,
    jenkins,
    keyvault,
    kube,
    moto_url,
    vault,
    vercel,
)
from tests.targets.kinds import KINDS, VAULT_PASSWORD


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = git_crypt_repository(tmp_path, "secrets/gitcrypt.yaml")
    (root / "vault-pass.txt").write_text(VAULT_PASSWORD)
    return root


@pytest.fixture
def stores(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Fixture name -> store, for every ``Kind.store`` of the table."""
    return {name: request.getfixturevalue(name) for name in dict.fromkeys(kind.store for kind in KINDS)}
