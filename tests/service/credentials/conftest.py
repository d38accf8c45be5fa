"""A private MariaDB server for the session's mysql_user tests (tests/processes/mariadb.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.processes import mariadb


@pytest.fixture(scope="session")
def mariadb_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from mariadb.running(tmp_path_factory.mktemp("mariadb"))


# moto's AWS server, as the aws/* targets' tests run it: IAM and STS for aws_iam_key.
from tests.service.targets.conftest import aws, clean_sdk_env, moto_url  # noqa: E402

__all__ = ["aws", "clean_sdk_env", "mariadb_url", "moto_url"]
