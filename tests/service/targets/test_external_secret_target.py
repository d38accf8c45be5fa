"""kubernetes/external_secret: SecretZero's ExternalSecret manifest, written, checked and repaired."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from secretsapi.service.drift import detect_drift
from secretsapi.service.sync import sync
from secretsapi.service.util.hashing import sha256_text
from secretsapi.service.validate import validate_document
from secretsapi.service.workspace import Workspace
from tests.factories import definition, write_definition

# What SecretZero 0.14.23 writes for the first target of its kubernetes-external-secrets example.
POSTGRES_MANIFEST = """\
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: postgres-password-sync
  namespace: default
  labels:
    app: postgres
    managed-by: secretzero
  annotations:
    description: PostgreSQL password from AWS Secrets Manager
spec:
  refreshInterval: 1h
  secretStoreRef:
    name: aws-secretsmanager
    kind: SecretStore
  target:
    name: postgres-credentials
    creationPolicy: Owner
  data:
  - secretKey: database_password
    remoteRef:
      key: prod/db/postgres/password
"""
EXAMPLE_CONFIG = {
    "namespace": "default", "secret_name": "postgres-credentials",
    "external_secret_name": "postgres-password-sync", "secret_store_ref": "aws-secretsmanager",
    "backend_type": "aws", "backend_key": "prod/db/postgres/password", "refresh_interval": "1h",
    "output_path": "./manifests/external-secret-postgres.yaml",
    "labels": {"app": "postgres", "managed-by": "secretzero"},
    "annotations": {"description": "PostgreSQL password from AWS Secrets Manager"},
}
MANIFEST = "manifests/external-secret-postgres.yaml"
TARGET_ID = "kubernetes/external_secret/"


def _secret(**config: Any) -> dict[str, Any]:
    return {"name": "database_password", "kind": "random_password", "config": {"length": 32},
            "targets": [{"provider": "local", "kind": "file", "config": {"path": ".env"}},
                        {"provider": "kubernetes", "kind": "external_secret",
                         "config": {**EXAMPLE_CONFIG, **config}}]}


def _ws(folder: Path, *secrets: dict[str, Any]) -> Workspace:
    doc = definition(*(secrets or (_secret(),)), providers={"kubernetes": {"kind": "kubernetes"}})
    return Workspace(definition_path=write_definition(folder, doc), lock_timeout=10, environ={})


def _entry(ws: Workspace) -> dict[str, Any]:
    return dict(json.loads(ws.lockfile_path.read_text())["secrets"]["database_password"])


def test_the_manifest_is_secretzeros_text_and_its_hash_is_recorded(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    assert sync(ws).errors == []
    assert (tmp_path / MANIFEST).read_text() == POSTGRES_MANIFEST
    assert _entry(ws)["targets"][TARGET_ID] == sha256_text(POSTGRES_MANIFEST)
    assert (tmp_path / MANIFEST).stat().st_mode & 0o777 == 0o600


def test_defaults_follow_secretzero(tmp_path: Path) -> None:
    secret = {"name": "token", "kind": "random_hex",
              "targets": [{"provider": "kubernetes", "kind": "external_secret",
                           "config": {"secret_name": "app", "output_path": "es.yaml"}}]}
    sync(_ws(tmp_path, secret))
    manifest = (tmp_path / "es.yaml").read_text()
    assert manifest == (
        "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n  name: app\n"
        "  namespace: default\nspec:\n  refreshInterval: 1h\n  secretStoreRef:\n    name: default\n"
        "    kind: SecretStore\n  target:\n    name: app\n    creationPolicy: Owner\n  data:\n"
        "  - secretKey: token\n    remoteRef:\n      key: token\n")


def test_the_value_is_never_in_the_manifest(tmp_path: Path) -> None:
    sync(_ws(tmp_path))
    value = (tmp_path / ".env").read_text().split("=", 1)[1].strip().strip("'\"")
    assert value not in (tmp_path / MANIFEST).read_text()


def test_an_edited_manifest_is_drift_and_repair_writes_it_again(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    sync(ws)
    assert detect_drift(ws).has_drift is False
    (tmp_path / MANIFEST).write_text(POSTGRES_MANIFEST.replace("refreshInterval: 1h", "refreshInterval: 1m"))
    assert [(d.details["reason"], d.details["target"]) for d in detect_drift(ws).details] == [
        ("value_changed", TARGET_ID)]
    assert sync(ws, repair=True).secrets_repaired == ["database_password"]
    assert (tmp_path / MANIFEST).read_text() == POSTGRES_MANIFEST
    assert detect_drift(ws).has_drift is False


def test_a_lockfile_secretzero_wrote_is_checked_for_the_manifest_presence_only(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    sync(ws)
    lock = json.loads(ws.lockfile_path.read_text())
    entry = lock["secrets"]["database_password"]
    entry["targets"][TARGET_ID] = entry["hash"]  # SecretZero records the value's hash
    ws.lockfile_path.write_text(json.dumps(lock))
    assert detect_drift(ws).has_drift is False
    (tmp_path / MANIFEST).unlink()
    assert [d.details["reason"] for d in detect_drift(ws).details] == ["target_missing"]


def test_a_dry_run_writes_no_manifest(tmp_path: Path) -> None:
    assert sync(_ws(tmp_path), dry_run=True).secrets_generated == ["database_password"]
    assert not (tmp_path / "manifests").exists()


def test_a_manifest_outside_the_target_roots_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    result = sync(_ws(project, _secret(output_path="../escape.yaml")))
    assert [e.message for e in result.errors] == [
        "path ../escape.yaml is outside the allowed target roots (SERVICE_TARGET_ROOTS)"]
    assert not (tmp_path / "escape.yaml").exists()


def test_validation_requires_secret_name_and_output_path(tmp_path: Path) -> None:
    secret = _secret()
    secret["targets"][1]["config"] = {"labels": ["not", "a", "mapping"]}
    doc = definition(secret, providers={"kubernetes": {"kind": "kubernetes"}})
    errors = validate_document(doc).errors
    assert [e.split(": ", 1)[1] for e in errors] == [
        "config.output_path is required and must be a non-empty string",
        "config.secret_name is required",
        "config.labels must be a mapping of strings to strings"]
