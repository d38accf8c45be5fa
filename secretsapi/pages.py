"""One page of a listing (the audit log, jobs, webhook deliveries): a list that knows its total."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


class Page(list[T]):
    """The page's items in order, and ``total``: how many items match the listing's filter in all
    (what a client needs for the standard ``total`` and ``next``). A list, so a caller that only
    walks the items need not know it is a page."""

    def __init__(self, items: Iterable[T], total: int) -> None:
        super().__init__(items)
        self.total = total
