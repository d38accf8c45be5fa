"""NDJSON (``application/x-ndjson``, ``?format=jsonl``): the audit export's media type."""

from __future__ import annotations

from rest_framework.renderers import JSONRenderer


class NDJSONRenderer(JSONRenderer):
    """Only picked by content negotiation: the audit view streams the rows itself, and writes
    any answer that would pass through a renderer (an error) as plain JSON."""

    media_type = "application/x-ndjson"
    format = "jsonl"
