"""How the admin shows an audit row to people: details as keys and values, times with their zone."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

# Lists longer than this show their first items and how many more (a sync's lists name thousands).
LIST_SHOWN = 50


def when(moment: datetime | None) -> str:
    """``2026-11-26 15:04:05 UTC``: to the second, in the site's zone, named."""
    if moment is None:
        return "-"
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S %Z")


# Outcomes that are no failure but call for attention (shown as warnings).
WARNINGS = frozenset({"drift"})


def outcome(success: bool, details: Any, recorded: str = "") -> str:
    """``ok``; a finding (``drift: 2 secrets: api_key, db_password``); or ``failed: <code>:
    <message>`` (the message the caller was shown, when recorded), else the first error the
    operation reports (``failed: 1 of 3: db_password at file .env: <its message>``)."""
    named = details if isinstance(details, Mapping) else {}
    if recorded == "drift" and success:
        drifted = [str(n) for n in named.get("secrets_with_drift") or []]
        shown = ", ".join(drifted[:5]) + (", ..." if len(drifted) > 5 else "")
        return f"drift: {len(drifted)} secret(s)" + (f": {shown}" if shown else "")
    if success:
        return "ok"
    if named.get("state") == "started":
        return "started: still running, or never reported back"
    parts = ["failed", *(str(named[k]) for k in ("error", "message") if named.get(k))]
    first = _first_error(named)
    if len(parts) == 1 and first:
        parts.append(first)
    return ": ".join(parts)


def _first_error(details: Mapping[str, Any]) -> str:
    """The first of an operation's per-secret errors, as ``<secret> at <target>: <message>``,
    with how many there were."""
    errors = details.get("errors")
    if not isinstance(errors, list) or not errors or not isinstance(errors[0], Mapping):
        return ""
    error = errors[0]
    where = str(error.get("secret") or "")
    if error.get("target"):
        where += f" at {error['target']}"
    text = f"{where}: {error.get('message')}" if error.get("message") else where
    return f"{text} (1 of {len(errors)} errors)" if len(errors) > 1 else text


def details_html(value: Any) -> SafeString:
    """A row's details as nested lists of keys and values; every text escaped."""
    if isinstance(value, Mapping):
        if not value:
            return format_html("<em>{}</em>", "none")
        items = format_html_join("", "<dt>{}</dt><dd>{}</dd>", ((k, details_html(v)) for k, v in value.items()))
        return format_html('<dl class="audit-details">{}</dl>', items)
    if isinstance(value, list):
        if not value:
            return format_html("<em>{}</em>", "none")
        shown = format_html_join("", "<li>{}</li>", ((details_html(v),) for v in value[:LIST_SHOWN]))
        more = format_html("<li><em>and {} more</em></li>", len(value) - LIST_SHOWN) if len(value) > LIST_SHOWN else ""
        return format_html("<ul>{}{}</ul>", shown, more)
    if value is None:
        return format_html("<em>{}</em>", "null")
    if isinstance(value, bool):
        return format_html("{}", "yes" if value else "no")
    return format_html("{}", value)
