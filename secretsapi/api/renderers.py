"""NDJSON (``application/x-ndjson``, ``?format=jsonl``): the audit export's media type."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.http import Http404
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer


class NDJSONRenderer(JSONRenderer):
    """Only picked by content negotiation: the audit view streams the rows itself, and writes
    any answer that would pass through a renderer (an error) as plain JSON."""

    media_type = "application/x-ndjson"
    format = "jsonl"


class FormatNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, answering an unknown ``?format=`` with the 422 of any bad parameter
    (DRF's own answer is a 404, as if the path did not exist)."""

    def filter_renderers(self, renderers: Iterable[BaseRenderer], format: str) -> Any:
        try:
            return super().filter_renderers(renderers, format)
        except Http404:
            known = " or ".join(str(renderer.format) for renderer in list(renderers))
            raise ValidationError({"format": [f"must be {known}."]}) from None
