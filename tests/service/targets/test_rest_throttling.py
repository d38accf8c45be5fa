"""How long the REST target kinds wait before retrying a throttled answer (``rest.pause``)."""

from __future__ import annotations

import time
from email.utils import formatdate

from secretsapi.service.targets.remote import RETRY_AFTER_MAX
from secretsapi.service.targets.rest import pause

JITTER = 0.25


def test_retry_after_in_seconds_is_waited_plus_jitter() -> None:
    assert 2 <= pause({"Retry-After": "2"}, 0) <= 2 + JITTER


def test_retry_after_as_an_http_date_is_waited_until_then() -> None:
    assert 3 <= pause({"Retry-After": formatdate(time.time() + 5, usegmt=True)}, 0) <= 5 + JITTER


def test_no_calls_left_waits_until_the_rate_limit_reset() -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 6)}
    assert 4 <= pause(headers, 0) <= 6 + JITTER


def test_a_reset_while_calls_remain_is_not_a_reason_to_wait_for_it() -> None:
    headers = {"x-ratelimit-remaining": "12", "x-ratelimit-reset": str(int(time.time()) + 600)}
    assert pause(headers, 0) <= 0.25 + JITTER


def test_waits_are_capped() -> None:
    assert pause({"Retry-After": "3600"}, 0) <= RETRY_AFTER_MAX + JITTER
    assert pause({"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 3600)}, 0) <= (
        RETRY_AFTER_MAX + JITTER)


def test_without_a_named_pause_the_backoff_doubles() -> None:
    assert 0.25 <= pause({}, 0) <= 0.25 + JITTER
    assert 1.0 <= pause({}, 2) <= 1.0 + JITTER


def test_an_unreadable_retry_after_falls_back_to_the_backoff() -> None:
    assert 0.5 <= pause({"Retry-After": "soon"}, 1) <= 0.5 + JITTER
