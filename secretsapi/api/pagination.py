"""The listings' page body: the spec's fields (the items, ``count``, ``page``, ``per_page``) and the
standard ``total``, ``next`` and ``previous`` of DRF's limit/offset pagination, whose links it builds.

The query (``limit`` up to 1000, ``offset``) is read by each view's strict query serializer first,
so a bad value is a 422 rather than silently clamped as DRF's paginator would; the page itself is
read by the action (audited, and counted with the filter it used).
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from secretsapi.pages import Page


class SpecPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 1000

    def body(self, request: Request, key: str, items: Any, page: Page[Any], *, limit: int,
             offset: int) -> dict[str, Any]:
        self.request, self.limit, self.offset, self.count = request, limit, offset, page.total
        return {key: items, "count": len(items), "page": offset // limit + 1, "per_page": limit,
                "total": page.total, "next": self.get_next_link(), "previous": self.get_previous_link()}


def page_body(request: Request, key: str, items: Any, page: Page[Any], *, limit: int,
              offset: int) -> dict[str, Any]:
    return SpecPagination().body(request, key, items, page, limit=limit, offset=offset)


class PageLinksSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """The standard fields every page adds to the spec's."""

    total = serializers.IntegerField(help_text="How many entries match the filter in all.")
    next = serializers.URLField(allow_null=True, help_text="The next page's URL; null on the last page.")
    previous = serializers.URLField(allow_null=True, help_text="The previous page's URL; null on the first.")
