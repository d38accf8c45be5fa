"""An IAM user's two access keys take turns (aws_iam_key), against moto's IAM and STS server:
create the new key, verify it, write it, commit; deactivate the old one after its grace, and
delete it when the next rotation needs its place."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import boto3
import pytest

from secretsapi.service.drift import detect_drift
from secretsapi.service.rotation import execute_rotation
from secretsapi.service.sync import sync
from tests.service.credentials.sources import Clock, credential_secret, held, project, state

ADMIN = ("AKIAADMINADMINADMIN0", "admin-secret")


def _iam(aws: str) -> Any:
    return boto3.client("iam", region_name="us-east-1", endpoint_url=aws, aws_access_key_id=ADMIN[0],
                        aws_secret_access_key=ADMIN[1])


def _connection(aws: str) -> str:
    return f"aws://{ADMIN[0]}:{ADMIN[1]}@us-east-1?endpoint_url={quote(aws, safe='')}"


def _keys(aws: str, user: str) -> dict[str, str]:
    return {k["AccessKeyId"]: k["Status"] for k in _iam(aws).list_access_keys(UserName=user)["AccessKeyMetadata"]}


def test_the_first_sync_creates_a_key_and_writes_its_id_and_secret(tmp_path: Path, aws: str) -> None:
    _iam(aws).create_user(UserName="deployer")
    ws = project(tmp_path, credential_secret("aws_iam_key", ("deployer",)), {"main": _connection(aws)}, Clock())
    assert sync(ws).secrets_failed == []
    value = json.loads(held(ws))
    assert sorted(value) == ["access_key_id", "secret_access_key"]
    assert _keys(aws, "deployer") == {value["access_key_id"]: "Active"}
    assert state(ws)["current"] == value["access_key_id"]


def test_a_rotation_keeps_the_old_key_active_through_its_grace_then_deactivates_and_deletes_it(
    tmp_path: Path, aws: str
) -> None:
    _iam(aws).create_user(UserName="deployer")
    clock = Clock()
    ws = project(tmp_path, credential_secret("aws_iam_key", ("deployer",), grace="1h"),
                 {"main": _connection(aws)}, clock)
    sync(ws)
    first = json.loads(held(ws))["access_key_id"]
    clock.advance(days=31)
    assert execute_rotation(ws).rotated == ["db"]
    second = json.loads(held(ws))["access_key_id"]
    assert _keys(aws, "deployer") == {first: "Active", second: "Active"}
    clock.advance(hours=2)
    execute_rotation(ws)
    assert _keys(aws, "deployer") == {first: "Inactive", second: "Active"}
    clock.advance(days=31)
    assert execute_rotation(ws).rotated == ["db"]  # IAM allows two keys: the inactive one makes room
    third = json.loads(held(ws))["access_key_id"]
    assert _keys(aws, "deployer") == {second: "Active", third: "Active"}


def _reset_auth(aws: str, count: str) -> None:
    """moto checks request signatures after ``count`` more unsigned actions ("inf": never)."""
    request = urllib.request.Request(f"{aws}/moto-api/reset-auth", data=count.encode(), method="POST",
                                     headers={"Content-Type": "text/plain"})
    with urllib.request.urlopen(request, timeout=10):
        pass


@pytest.fixture
def signed_aws(aws: str) -> Iterator[tuple[str, str]]:
    """moto checking signatures: an admin user allowed everything and the user ``deployer`` allowed
    sts:GetCallerIdentity (made by the 5 unsigned actions allowed); the connection URL and the endpoint."""
    _reset_auth(aws, "5")
    try:
        iam = _iam(aws)
        iam.create_user(UserName="admin")
        iam.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        key = iam.create_access_key(UserName="admin")["AccessKey"]
        iam.create_user(UserName="deployer")
        iam.put_user_policy(UserName="deployer", PolicyName="whoami", PolicyDocument=json.dumps(
            {"Version": "2012-10-17",
             "Statement": [{"Effect": "Allow", "Action": "sts:GetCallerIdentity", "Resource": "*"}]}))
        yield (f"aws://{key['AccessKeyId']}:{quote(key['SecretAccessKey'], safe='')}@us-east-1"
               f"?endpoint_url={quote(aws, safe='')}"), aws
    finally:
        _reset_auth(aws, "inf")


def test_a_key_deleted_behind_the_service_is_drift_and_repair_creates_a_new_one(
    tmp_path: Path, signed_aws: tuple[str, str]
) -> None:
    connection, endpoint = signed_aws
    ws = project(tmp_path, credential_secret("aws_iam_key", ("deployer",)), {"main": connection}, Clock())
    assert sync(ws).secrets_failed == []
    first = json.loads(held(ws))["access_key_id"]
    admin = urlsplit(connection)
    boto3.client("iam", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id=admin.username,
                 aws_secret_access_key=unquote(admin.password or "")).delete_access_key(
        UserName="deployer", AccessKeyId=first)
    assert [(i.details["reason"], i.details["changed_at_source"]) for i in detect_drift(ws).details] == [
        ("credential_rejected", True)]
    assert sync(ws, repair=True).secrets_repaired == ["db"]
    assert json.loads(held(ws))["access_key_id"] != first
    assert detect_drift(ws).has_drift is False


def test_without_the_aws_sdk_an_iam_key_fails_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from secretsapi.service.credentials.iam import IamSource
    from secretsapi.service.errors import GeneratorError

    monkeypatch.setitem(sys.modules, "botocore.exceptions", None)
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(GeneratorError, match="make cloud"):
        IamSource("aws://us-east-1").issue(None, "deployer", 40)
