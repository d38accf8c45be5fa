"""The one retry and throttle policy of every HTTP store (``rest.retry_policy``): which answers are
retried, and how long it waits before each retry."""

from __future__ import annotations

import time
from email.utils import formatdate

from urllib3 import HTTPResponse

from secretsapi.service.targets.rest import RETRY_AFTER_MAX, retry_policy

JITTER = 0.25


def answer(status: int, **headers: str) -> HTTPResponse:
    return HTTPResponse(status=status, headers={k.replace("_", "-"): v for k, v in headers.items()})


def test_throttling_answers_are_retried_and_others_are_not() -> None:
    policy = retry_policy()
    assert policy.is_retry("POST", 429) and policy.is_retry("PUT", 503)
    assert policy.is_retry("PUT", 403, has_retry_after=True)  # GitHub's secondary rate limit
    assert not policy.is_retry("PUT", 403) and not policy.is_retry("GET", 500) and not policy.is_retry("GET", 401)


def test_retry_after_in_seconds_is_waited() -> None:
    assert retry_policy().get_retry_after(answer(429, Retry_After="2")) == 2


def test_retry_after_as_an_http_date_is_waited_until_then() -> None:
    waited = retry_policy().get_retry_after(answer(503, Retry_After=formatdate(time.time() + 5, usegmt=True)))
    assert waited is not None and 3 <= waited <= 5


def test_a_throttled_answer_without_retry_after_waits_until_the_rate_limit_reset() -> None:
    waited = retry_policy().get_retry_after(answer(429, X_RateLimit_Reset=str(int(time.time()) + 6)))
    assert waited is not None and 4 <= waited <= 6


def test_gitlabs_ratelimit_reset_counts_when_no_calls_remain() -> None:
    headers = {"RateLimit-Remaining": "0", "RateLimit-Reset": str(int(time.time()) + 3)}
    waited = retry_policy().get_retry_after(HTTPResponse(status=503, headers=headers))
    assert waited is not None and 1 <= waited <= 3


def test_a_reset_while_calls_remain_is_not_a_reason_to_wait_for_it() -> None:
    headers = {"X-RateLimit-Remaining": "12", "X-RateLimit-Reset": str(int(time.time()) + 600)}
    assert retry_policy().get_retry_after(HTTPResponse(status=503, headers=headers)) is None


def test_waits_are_capped() -> None:
    policy = retry_policy()
    assert policy.get_retry_after(answer(429, Retry_After="3600")) == RETRY_AFTER_MAX
    assert policy.get_retry_after(answer(429, X_RateLimit_Reset=str(int(time.time()) + 3600))) == RETRY_AFTER_MAX


def test_without_a_named_pause_every_retry_backs_off_with_jitter() -> None:
    policy = retry_policy().increment("GET", "/", response=answer(429))
    assert 0.25 <= policy.get_backoff_time() <= 0.25 + JITTER
    policy = policy.increment("GET", "/", response=answer(429)).increment("GET", "/", response=answer(429))
    assert 1.0 <= policy.get_backoff_time() <= 1.0 + JITTER


def test_an_unreadable_retry_after_falls_back_to_the_backoff() -> None:
    assert retry_policy().get_retry_after(answer(429, Retry_After="soon")) is None


def test_redirects_and_timed_out_reads_are_never_retried() -> None:
    policy = retry_policy()
    assert (policy.redirect, policy.read, policy.connect) == (0, 0, 1)
