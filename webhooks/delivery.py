"""Sending due deliveries: signed POSTs, retried with capped exponential backoff for a day.

``deliver_due(now)`` is the one entry point: the worker runs it periodically and
``manage.py webhook deliver`` once. Each due row is first leased (its next attempt moved past
the request's timeout by a conditional update), so several workers and instances never send
the same attempt twice. Redirects are never followed, and the address is checked again before
each attempt and is the one the attempt connects to (``addresses.resolve``: no second lookup
between the check and the connection). The request goes straight there, as urllib3 sends it
alone: no proxy from ``*_PROXY``, no credentials from ``~/.netrc``, nothing from the
environment at all.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import certifi
import urllib3
from django.db import transaction
from django.utils import timezone

from webhooks import addresses
from webhooks.models import Attempt, Delivery
from webhooks.signing import HEADER, signature, standard_headers

# The first retry after BACKOFF_BASE, doubling to at most BACKOFF_CAP, each scaled by a random
# factor in [0.5, 1) so endpoints that failed together are not retried in lockstep.
BACKOFF_BASE = timedelta(seconds=30)
BACKOFF_CAP = timedelta(hours=1)
# A delivery still failing this long after its event is marked failed (after one more attempt).
RETRY_FOR = timedelta(hours=24)
TIMEOUT_SECONDS = 10.0
# The certificate authorities an https endpoint's certificate must chain to (as requests uses).
CA_BUNDLE = certifi.where()
BATCH = 100
ERROR_MAX = 255


@dataclass(frozen=True)
class Outcome:
    delivered: int = 0
    retrying: int = 0
    failed: int = 0


def backoff(attempts: int, rng: random.Random | None = None) -> timedelta:
    """The wait after the ``attempts``-th failed attempt."""
    base: timedelta = min(BACKOFF_CAP, BACKOFF_BASE * (2 ** min(attempts - 1, 20)))
    factor: float = 0.5 + 0.5 * (rng or _rng).random()
    return base * factor


def deliver_due(now: datetime | None = None, *, limit: int = BATCH) -> Outcome:
    """Attempt every pending delivery due at ``now`` (at most ``limit``); what became of them."""
    now = now or timezone.now()
    due = list(Delivery.objects.filter(state=Delivery.PENDING, next_attempt_at__lte=now)
               .order_by("next_attempt_at", "id").values_list("id", "next_attempt_at")[:limit])
    counts = {Delivery.DELIVERED: 0, Delivery.PENDING: 0, Delivery.FAILED: 0}
    lease = now + timedelta(seconds=TIMEOUT_SECONDS + 60)
    for pk, next_at in due:
        if not Delivery.objects.filter(pk=pk, state=Delivery.PENDING, next_attempt_at=next_at).update(
                next_attempt_at=lease):
            continue  # another worker took it
        delivery = Delivery.objects.select_related("endpoint").filter(pk=pk).first()
        if delivery is not None:  # None: its endpoint was removed meanwhile
            counts[_attempt(delivery, now)] += 1
    return Outcome(counts[Delivery.DELIVERED], counts[Delivery.PENDING], counts[Delivery.FAILED])


def _attempt(delivery: Delivery, now: datetime) -> str:
    status, error, elapsed = _post(delivery, now)
    ok = status is not None and 200 <= status < 300
    delivery.attempts += 1
    if ok:
        delivery.state = Delivery.DELIVERED
    elif now - delivery.created_at >= RETRY_FOR:
        delivery.state = Delivery.FAILED
    else:
        delivery.next_attempt_at = now + backoff(delivery.attempts)
    delivery.last_status, delivery.last_error, delivery.updated_at = status, error, now
    with transaction.atomic():
        Attempt.objects.create(delivery=delivery, at=now, status=status, error=error, duration_ms=elapsed)
        delivery.save(update_fields=["state", "attempts", "next_attempt_at", "last_status", "last_error",
                                     "updated_at"])
    return delivery.state


def _post(delivery: Delivery, now: datetime) -> tuple[int | None, str, int]:
    """The endpoint's status (None when there was no answer), an error naming why it failed, and ms taken."""
    endpoint = delivery.endpoint
    if not endpoint.enabled:
        return None, "the endpoint is disabled", 0
    try:
        destination = addresses.resolve(endpoint.url)
    except addresses.AddressRefused as exc:
        return None, str(exc)[:ERROR_MAX], 0
    body = json.dumps(delivery.payload, separators=(",", ":"), sort_keys=True).encode()
    sent_at = int(now.timestamp())
    # The event's id: the same on every retry and to every endpoint, so a receiver drops a repeat.
    message_id = str(delivery.payload.get("id") or f"delivery-{delivery.pk}")
    headers = {"Host": destination.host_header, "Content-Type": "application/json",
               "User-Agent": "secretsapi-webhooks", "X-Webhook-Event": delivery.event,
               "X-Webhook-Delivery": str(delivery.pk), HEADER: signature(endpoint.secret, sent_at, body),
               **standard_headers(endpoint.secret, message_id, sent_at, body)}
    started = time.monotonic()
    pool = _pool(destination)
    try:
        response = pool.urlopen("POST", destination.target, body=body, headers=headers, redirect=False,
                                retries=False, assert_same_host=False, preload_content=False)
    except Exception as exc:
        # Any failure to send fails this attempt, never the other deliveries of the batch. The
        # kind of failure only: an exception's text can quote the URL, which may carry a token.
        return None, f"no answer: {_failure(exc)}", _ms(started)
    finally:
        pool.close()
    response.release_conn()
    error = "" if 200 <= response.status < 300 else f"answered {response.status}"
    if 300 <= response.status < 400:
        error += " (redirects are not followed)"
    return response.status, error, _ms(started)


def _pool(to: addresses.Destination) -> urllib3.HTTPConnectionPool:
    """A connection to the checked address; for https, the handshake names (SNI) and verifies
    the URL's host, as a connection by name would."""
    timeout = urllib3.Timeout(connect=TIMEOUT_SECONDS, read=TIMEOUT_SECONDS)
    if to.scheme == "https":
        return urllib3.HTTPSConnectionPool(to.address, to.port, timeout=timeout, retries=False, maxsize=1,
                                           server_hostname=to.host, assert_hostname=to.host,
                                           cert_reqs="CERT_REQUIRED", ca_certs=CA_BUNDLE)
    return urllib3.HTTPConnectionPool(to.address, to.port, timeout=timeout, retries=False, maxsize=1)


def _failure(exc: Exception) -> str:
    """The kind of failure, in the words requests used: SSLError, Timeout or ConnectionError."""
    if isinstance(exc, urllib3.exceptions.SSLError):
        return "SSLError"
    if isinstance(exc, urllib3.exceptions.TimeoutError) and not isinstance(exc, urllib3.exceptions.NewConnectionError):
        return "Timeout"
    return "ConnectionError"


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


_rng = random.Random()  # noqa: S311 - jitter, not a secret
