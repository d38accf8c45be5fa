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


def outcome(success: bool, details: Any) -> str:
    """``ok``, or ``failed: <code>: <message>`` (the message the caller was shown, when recorded)."""
    if success:
        return "ok"
    if not isinstance(details, Mapping):
        return "failed"
    if details.get("state") == "started":
        return "started: still running, or never reported back"
    parts = ["failed", *(str(details[k]) for k in ("error", "message") if details.get(k))]
    return ": ".join(parts)


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
