"""The operator's rule for the server's own credentials (``definition.egress``): which addresses a
kind's credentials may reach, read as the HTTP clients read a URL, and what a provider_read may
read with them."""

from __future__ import annotations

import pytest

from secretsapi.service.definition.egress import ADDRESS_SETTING, READ_SETTING, Egress
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
