"""Webhook operations, one function each, audited like every other operation.

The endpoint's secret is never in an audit row: the rows name the endpoint by id and URL, and
``add`` returns the secret only to the caller that created it.
"""

from __future__ import annotations

import secrets as tokens
from collections.abc import Sequence
from datetime import datetime

from django.db.models import QuerySet

from projects import registry as project_registry
from projects.errors import ProjectNotFound
from secretsapi.actions.auditing import audited
from secretsapi.pages import Page
from secretsapi.service.errors import ServiceError
from webhooks import addresses, delivery, signing
from webhooks.models import EVENTS, Delivery, Endpoint

SECRET_MIN = 16
ID_DIGITS = 18  # below 2**63: every id the database stores
SECRET_MAX = 255


class WebhookRefused(ServiceError):
    """An endpoint the service will not add: a refused URL, an unknown event, a weak secret."""

    code = "webhook_refused"


class WebhookNotFound(ServiceError):
    code = "webhook_not_found"


def new_secret() -> str:
    """``whsec_`` and 32 random bytes in base64: Standard Webhooks' libraries take it as it is."""
    return signing.new_secret(tokens.token_bytes(32))


def add_webhook(url: str, events: Sequence[str], secret: str, *, actor: str | None,
                projects: Sequence[str] = ()) -> Endpoint:
    """A new enabled endpoint for ``events`` (every event when empty) of ``projects`` (every
    project when empty), after its URL is checked."""
    chosen = sorted(set(events)) or list(EVENTS)
    wanted = sorted(set(projects))
    request = {"url": _shown(url), "events": chosen, **({"projects": wanted} if wanted else {})}
    with audited("add_webhook", "webhooks", actor, request) as facts:
        for name in wanted:
            try:
                project_registry.find(name)
            except ProjectNotFound:
                raise WebhookRefused(f"no project named {name!r}") from None
        unknown = sorted(set(chosen) - set(EVENTS))
        if unknown:
            raise WebhookRefused(f"unknown event {unknown[0]!r}; the events are {', '.join(EVENTS)}")
        if not SECRET_MIN <= len(secret) <= SECRET_MAX or not secret.isprintable():
            raise WebhookRefused(f"the secret must be {SECRET_MIN} to {SECRET_MAX} printable characters")
        try:
            addresses.check(url)
        except addresses.AddressRefused as exc:
            raise WebhookRefused(f"{_shown(url)}: {exc}") from None
        endpoint = Endpoint.objects.create(url=url, events=chosen, secret=secret, projects=wanted)
        facts["webhook"] = endpoint.pk
    return endpoint


def list_webhooks(*, actor: str | None, project: str | None = None) -> list[Endpoint]:
    """Every endpoint; with ``project``, those sent that project's events only by name (an
    endpoint of every project is not listed to a caller confined to one)."""
    with audited("list_webhooks", "webhooks", actor) as facts:
        endpoints = [e for e in Endpoint.objects.order_by("id") if project is None or project in e.projects]
        facts["count"] = len(endpoints)
    return endpoints


def read_webhook(webhook_id: int | str, *, actor: str | None, project: str | None = None) -> Endpoint:
    with audited("read_webhook", f"webhook:{webhook_id}", actor):
        return _endpoint(webhook_id, project)


def set_webhook_enabled(webhook_id: int | str, enabled: bool, *, actor: str | None,
                        project: str | None = None) -> Endpoint:
    action = "enable_webhook" if enabled else "disable_webhook"
    with audited(action, f"webhook:{webhook_id}", actor):
        endpoint = _endpoint(webhook_id, project)
        endpoint.enabled = enabled
        endpoint.save(update_fields=["enabled"])
    return endpoint


def remove_webhook(webhook_id: int | str, *, actor: str | None, project: str | None = None) -> None:
    """The endpoint and its deliveries (pending ones are never sent)."""
    with audited("remove_webhook", f"webhook:{webhook_id}", actor) as facts:
        endpoint = _endpoint(webhook_id, project)
        facts["url"] = _shown(endpoint.url)
        endpoint.delete()


def deliver_webhooks(*, actor: str | None, now: datetime | None = None) -> delivery.Outcome:
    with audited("deliver_webhooks", "webhooks", actor) as facts:
        outcome = delivery.deliver_due(now)
        facts.update(delivered=outcome.delivered, retrying=outcome.retrying, failed=outcome.failed)
    return outcome


def read_deliveries(webhook_id: int | str, *, actor: str | None, limit: int, offset: int,
                    state: str | None = None, project: str | None = None) -> Page[Delivery]:
    """A newest-first page of an endpoint's deliveries, each with its attempts."""
    request = {"limit": limit, "offset": offset, **({"state": state} if state else {})}
    with audited("read_webhook_deliveries", f"webhook:{webhook_id}", actor, request) as facts:
        _endpoint(webhook_id, project)
        rows: QuerySet[Delivery] = Delivery.objects.filter(endpoint_id=webhook_id)
        if state:
            rows = rows.filter(state=state)
        page = Page(rows.order_by("-created_at", "-id").prefetch_related("attempt_rows")[offset: offset + limit],
                    rows.count())
        facts["returned"] = len(page)
    return page


def _endpoint(webhook_id: int | str, project: str | None = None) -> Endpoint:
    """The endpoint; an id from a path is digits within what the database stores, else none is
    found. With ``project``: only one that names that project (else none is found, as listed)."""
    text = str(webhook_id)
    found = None
    if text.isascii() and text.isdigit() and len(text) <= ID_DIGITS:
        found = Endpoint.objects.filter(pk=int(text)).first()
    if found is None or (project is not None and project not in found.projects):
        raise WebhookNotFound(f"no webhook with id {text[:40]!r}")
    return found


def _shown(url: str) -> str:
    """The URL as rows and messages show it: query values (which may carry a token) and
    credentials redacted (``addresses.shown``)."""
    return addresses.shown(url)[:255]
