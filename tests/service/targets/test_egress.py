"""The operator's rule for the server's own credentials (``definition.egress``): which addresses a
kind's credentials may reach, read as the HTTP clients read a URL, and what a provider_read may
read with them."""

from __future__ import annotations

import pytest

from secretsapi.service.definition.egress import (
    ADDRESS_SETTING,
    AWS_PROFILES_SETTING,
    AWS_ROLES_SETTING,
    AZURE_IDENTITIES_SETTING,
    KUBE_CONTEXTS_SETTING,
    READ_SETTING,
    WRITE_SETTING,
    Egress,
)
from secretsapi.service.errors import TargetError

HOSTED = ("https://api.github.com", "https://*.vault.azure.net")


@pytest.mark.parametrize("url", [
    "https://api.github.com", "https://API.GitHub.com/", "https://api.github.com:443/api/v3",
    "https://myvault.vault.azure.net", "https://myvault.vault.azure.net.",
])
def test_the_public_service_of_a_hosted_kind_is_allowed(url: str) -> None:
    assert Egress().allows(url, kind="github", hosted=HOSTED)


@pytest.mark.parametrize("url", [
    "http://api.github.com",  # plain HTTP
    "https://api.github.com:8443",  # another port
    "https://api.github.com.attacker.example",
    "https://attacker.example#@api.github.com",
    "https://api.github.com@attacker.example",  # user info: the host is the attacker's
    "https://api.github.com\\@attacker.example",  # a backslash clients read differently
    "https://a.b.vault.azure.net",  # one label only
    "https://vault.azure.net",
    "ftp://api.github.com", "api.github.com", "", "https://",
])
def test_anything_else_is_refused(url: str) -> None:
    assert not Egress().allows(url, kind="github", hosted=HOSTED)


def test_the_operator_lists_addresses_by_kind_with_their_scheme_and_port() -> None:
    egress = Egress({"vault": ("https://vault.internal:8200", "http://127.0.0.1:8201", "https://*.vault.lan")})
    assert egress.allows("https://vault.internal:8200/v1", kind="vault")
    assert not egress.allows("http://vault.internal:8200", kind="vault")  # listed https only
    assert not egress.allows("https://vault.internal", kind="vault")  # another port
    assert egress.allows("http://127.0.0.1:8201", kind="vault")
    assert egress.allows("https://127.0.0.1:8201", kind="vault")
    assert egress.allows("https://a.vault.lan", kind="vault") and not egress.allows("https://vault.lan", kind="vault")
    assert not egress.allows("https://vault.internal:8200", kind="jenkins")  # listed for another kind


def test_an_address_the_servers_environment_names_is_the_operators() -> None:
    assert Egress().allows("http://vault:8200/", kind="vault", operator="http://vault:8200")
    assert not Egress().allows("http://vault:8201", kind="vault", operator="http://vault:8200")


def test_a_refusal_names_the_address_the_kind_and_the_setting() -> None:
    with pytest.raises(TargetError) as refused:
        Egress().check("https://10.0.0.5:8200", kind="vault", alias="v", what="the server's Vault token")
    assert refused.value.message == (
        "provider 'v': the server's Vault token may not go there: https://10.0.0.5:8200 is not an address the "
        f"operator allows for 'vault' (list it in {ADDRESS_SETTING}, or give the provider its own credentials)")
    with pytest.raises(TargetError, match=f"plain http:// to http://vault:8200 is not allowed .* {ADDRESS_SETTING}"):
        Egress({"vault": ("https://vault:8200",)}).check("http://vault:8200", kind="vault", alias="v", what="it")


def test_provider_reads_are_allowed_under_listed_prefixes_only() -> None:
    egress = Egress(read_prefixes={"vault/vault_kv": ("secret/shared/",)})
    egress.check_read("vault/vault_kv", "secret/shared/db#password")
    for location in ("secret/other/db", "secret/shared/../other/db", "secret/shared/./x", "secret/shared-x/db"):
        with pytest.raises(TargetError, match=READ_SETTING):
            egress.check_read("vault/vault_kv", location)
    with pytest.raises(TargetError, match=READ_SETTING):
        egress.check_read("aws/ssm_parameter", "secret/shared/db")
    with pytest.raises(TargetError, match=READ_SETTING):
        Egress().check_read("vault/vault_kv", "secret/shared/db")


def test_reads_anywhere_only_when_the_rule_says_so() -> None:
    Egress(read_prefixes=None).check_read("vault/vault_kv", "secret/any/db")


def test_writes_anywhere_until_locations_are_listed_then_under_them_only() -> None:
    Egress().check_write("vault/vault_kv", "secret/team-b/db")
    listed = Egress(write_prefixes={"vault/vault_kv": ("secret/team-a/",)})
    listed.check_write("vault/vault_kv", "secret/team-a/db")
    for location in ("secret/team-b/db", "secret/team-a/../team-b/db"):
        with pytest.raises(TargetError, match=WRITE_SETTING):
            listed.check_write("vault/vault_kv", location)
    with pytest.raises(TargetError, match=WRITE_SETTING):
        Egress(write_prefixes={}).check_write("vault/vault_kv", "secret/team-a/db")


def test_identities_are_any_unset_and_the_listed_ones_once_listed() -> None:
    Egress().check_aws_profile("prod", "aws")
    Egress().check_kube_context("prod", "k8s")
    Egress().check_aws_role("arn:aws:iam::1:role/prod", "aws")
    rule = Egress(aws_profiles=("ci",), kube_contexts=("ci",), aws_roles=("arn:aws:iam::1:role/ci",))
    rule.check_aws_profile("ci", "aws")
    rule.check_kube_context("ci", "k8s")
    rule.check_aws_role("arn:aws:iam::1:role/ci", "aws")
    with pytest.raises(TargetError, match=AWS_PROFILES_SETTING):
        rule.check_aws_profile("prod", "aws")
    with pytest.raises(TargetError, match=KUBE_CONTEXTS_SETTING):
        rule.check_kube_context("prod", "k8s")
    with pytest.raises(TargetError, match=AWS_ROLES_SETTING):
        rule.check_aws_role("arn:aws:iam::1:role/prod", "aws")


def test_an_azure_managed_identity_is_any_unset_and_the_listed_ones_once_listed() -> None:
    Egress().check_azure_identity("prod-admin-id", "azure")
    rule = Egress(azure_identities=("ci-id",))
    rule.check_azure_identity("ci-id", "azure")
    with pytest.raises(TargetError, match=AZURE_IDENTITIES_SETTING):
        rule.check_azure_identity("prod-admin-id", "azure")
    with pytest.raises(TargetError, match=AZURE_IDENTITIES_SETTING):
        Egress(azure_identities=()).check_azure_identity("ci-id", "azure")


def test_the_services_own_settings_are_never_a_readable_variable() -> None:
    assert Egress().readable_variable("TEAM_PASS")
    assert Egress(env_allowed=("TEAM_*",)).readable_variable("TEAM_PASS")
    assert not Egress(env_allowed=("TEAM_*",)).readable_variable("AWS_SECRET_ACCESS_KEY")
    for name in ("SERVICE_API_KEY", "DJANGO_SETTINGS_MODULE", "DATABASE_URL"):
        assert not Egress().readable_variable(name) and not Egress(env_allowed=("*",)).readable_variable(name)


def test_equal_rules_are_one_cache_key() -> None:
    assert hash(Egress({"vault": ("https://v",)})) == hash(Egress({"vault": ("https://v",)}))
    assert Egress(read_prefixes=None) != Egress()
