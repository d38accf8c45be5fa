"""Provider aliases, the target and provider catalogues, and declared providers without credentials."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from secretsapi.service.catalogue import declared_providers, provider_catalogue, target_catalogue
from secretsapi.service.definition.model import TargetSpec
from secretsapi.service.loading.loader import load_definition
from secretsapi.service.targets import TargetKind, get_kind, kinds

REMOTE = ("aws/ssm_parameter", "aws/secrets_manager", "vault/vault_kv", "kubernetes/kubernetes_secret")
CREDENTIALS = ("AKIA-s3cr3t-id", "s3cr3t-access-key", "hvs.s3cr3t-token", "inline-s3cr3t", "p4ssw0rd-s3cr3t",
               "s3cr3t-session")


def _load(tmp_path: Path, document: dict[str, object]) -> object:
    path = tmp_path / "Secretfile.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return load_definition(path, environ={})


def test_a_target_naming_a_provider_alias_takes_the_kind_of_that_provider(tmp_path: Path) -> None:
    definition = _load(tmp_path, {
        "version": "1.0",
        "providers": {"prod-aws": {"kind": "aws", "config": {"region": "eu-west-1"}}, "vault": {}},
        "secrets": [{"name": "a", "kind": "uuid", "targets": [
            {"provider": "prod-aws", "kind": "ssm_parameter", "config": {"name": "/a"}},
            {"provider": "vault", "kind": "vault_kv", "config": {"path": "a"}},
            {"provider": "local", "kind": "file", "config": {"path": "a.env"}},
        ]}],
    })
    targets = definition.secrets[0].targets  # type: ignore[attr-defined]
    assert [t.type for t in targets] == ["aws/ssm_parameter", "vault/vault_kv", "local/file"]
    assert [t.provider_kind for t in targets] == ["aws", None, None]
    kind = get_kind(targets[0].type)
    assert kind.target_id(targets[0], None) == "prod-aws/ssm_parameter//a"  # type: ignore[arg-type]
    assert TargetSpec("local", "file", {}).type == "local/file"


def test_every_remote_kind_is_registered_and_follows_the_protocol() -> None:
    registered = {kind.type: kind for kind in kinds()}
    for type_ in REMOTE:
        provider, name = type_.split("/")
        assert isinstance(registered[type_], TargetKind)
        assert registered[type_].validate(TargetSpec(provider, name, {}), "here")  # config required


def test_target_catalogue_lists_every_kind_with_its_config_keys_and_defaults() -> None:
    catalogue = {entry["type"]: entry for entry in target_catalogue()}
    assert set(REMOTE) | {"local/file", "local/template"} <= set(catalogue)
    options = {o["name"]: o for o in catalogue["vault/vault_kv"]["config"]}
    assert (options["mount_point"]["default"], options["version"]["default"], options["key"]["default"]) == (
        "secret", 2, "value")
    ssm = {o["name"]: o["default"] for o in catalogue["aws/ssm_parameter"]["config"]}
    assert ssm == {"name": None, "type": "SecureString", "tier": "Standard", "description": None,
                   "kms_key_id": None, "overwrite": True}
    kube = {o["name"]: o["default"] for o in catalogue["kubernetes/kubernetes_secret"]["config"]}
    assert kube["namespace"] == "default" and set(kube) == {"secret_name", "namespace", "data_key", "labels",
                                                            "annotations"}
    assert all(entry["description"] for entry in catalogue.values())
    json.dumps(target_catalogue())  # plain JSON values only


def test_provider_catalogue_lists_each_provider_kind_and_the_targets_it_offers() -> None:
    providers = {entry["kind"]: entry for entry in provider_catalogue()}
    assert set(providers) >= {"local", "aws", "vault", "kubernetes", "azure", "vercel", "github", "gitlab", "jenkins",
                              "ansible_vault", "git_crypt"}
    assert all(entry["targets"] for entry in providers.values())  # every provider kind writes something
    assert providers["aws"]["targets"] == ["aws/secrets_manager", "aws/ssm_parameter"]
    assert providers["local"]["targets"] == ["local/file", "local/template"]
    assert {o["name"] for o in providers["vault"]["config"]} >= {"address", "namespace", "verify", "timeout"}
    assert {o["name"] for o in providers["vault"]["auth_config"]} == {"token", "token_file", "role_id",
                                                                      "secret_id", "approle_mount"}
    assert {o["name"] for o in providers["aws"]["auth_config"]} >= {"role_arn", "session_name"}
    assert providers["ansible_vault"]["targets"] == ["ansible_vault/ansible_vault_file"]
    assert providers["git_crypt"]["targets"] == ["git_crypt/git_crypt_file"]
    assert {o["name"] for o in providers["kubernetes"]["config"]} >= {"kubeconfig", "context", "host"}
    json.dumps(provider_catalogue())


def test_declared_providers_never_show_credentials(tmp_path: Path) -> None:
    definition = _load(tmp_path, {
        "version": "1.0",
        "providers": {
            "aws": {"kind": "aws",
                    "auth": {"kind": "static", "config": {"access_key_id": "AKIA-s3cr3t-id",
                                                          "secret_access_key": "s3cr3t-access-key"}},
                    "config": {"region": "eu-west-1", "session_token": "s3cr3t-session"}},
            "vault": {"auth": {"kind": "token", "token": "hvs.s3cr3t-token"},
                      "config": {"address": "https://admin:p4ssw0rd-s3cr3t@vault.example:8200",
                                 "token": "inline-s3cr3t", "nested": {"password": "p4ssw0rd-s3cr3t"}}},
            "cluster": {"kind": "kubernetes", "config": {"kubeconfig": "kube.yaml", "context": "prod"}},
        },
        "secrets": [],
    })
    declared = {entry["alias"]: entry for entry in declared_providers(definition)}  # type: ignore[arg-type]
    text = json.dumps(declared)
    assert not [c for c in CREDENTIALS if c in text]
    assert declared["aws"]["config"] == {"region": "eu-west-1", "session_token": "***"}
    assert (declared["aws"]["auth_kind"], declared["aws"]["auth_keys"]) == (
        "static", ["access_key_id", "secret_access_key"])
    assert declared["vault"]["config"]["address"] == "https://***@vault.example:8200"
    assert declared["vault"]["config"]["nested"] == {"password": "***"}
    assert declared["vault"]["auth_keys"] == ["token"]
    assert declared["cluster"]["config"] == {"kubeconfig": "kube.yaml", "context": "prod"}
    assert declared["cluster"]["targets"] == ["kubernetes/external_secret", "kubernetes/kubernetes_secret"]
    assert declared["cluster"]["known"] is True
