"""Webhook URLs: http(s) only, no credentials, public addresses unless SERVICE_WEBHOOK_ALLOW_PRIVATE."""

from __future__ import annotations

from typing import Any

import pytest

from webhooks.addresses import AddressRefused, check

NOT_PUBLIC = [
    "http://127.0.0.1/hook", "http://localhost:8080/hook", "http://[::1]/hook", "http://169.254.169.254/latest",
    "http://10.1.2.3/", "http://192.168.0.10/", "http://172.16.5.4/", "http://100.64.0.1/", "http://0.0.0.0/",
    "http://2130706433/", "http://[::ffff:127.0.0.1]/", "http://[64:ff9b::a00:1]/", "http://[2002:7f00:1::1]/",
    "http://[fe80::1]/", "http://224.0.0.1/",
]


@pytest.mark.parametrize("url", NOT_PUBLIC)
def test_a_url_resolving_to_a_non_public_address_is_refused_naming_the_setting(url: str, settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(AddressRefused, match="SERVICE_WEBHOOK_ALLOW_PRIVATE"):
        check(url)


@pytest.mark.parametrize("url", NOT_PUBLIC[:3])
def test_a_non_public_address_is_accepted_when_the_setting_allows_it(url: str, settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    check(url)


def test_a_public_address_is_accepted(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = False
    check("https://93.184.215.14/hook")


@pytest.mark.parametrize("url", ["ftp://93.184.215.14/", "file:///etc/passwd", "gopher://x/", "93.184.215.14/hook",
                                 "javascript:alert(1)"])
def test_a_scheme_other_than_http_or_https_is_refused(url: str, settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    with pytest.raises(AddressRefused):
        check(url)


def test_a_url_with_credentials_is_refused(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = True
    with pytest.raises(AddressRefused, match="credentials"):
        check("https://user:pass@93.184.215.14/hook")


def test_a_host_that_does_not_resolve_is_refused(settings: Any) -> None:
    settings.SERVICE_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(AddressRefused, match="does not resolve"):
        check("https://no-such-host.invalid/hook")
