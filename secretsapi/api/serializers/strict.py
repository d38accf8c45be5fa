"""Requests mean exactly what they say: no unknown names, no coercion, bounded integers.

Every request body serializer inherits ``StrictRequestSerializer`` and uses the strict fields
below; every query serializer inherits ``StrictQuerySerializer``. A name the serializer does not
declare is a 422 naming it (with the closest known name), a JSON value of the wrong type is a 422
(``"false"`` is not a boolean, ``5`` is not a string; no request body has an integer field), and
a query value is parsed strictly (integers: digits only, within what the database stores;
booleans: ``true`` or ``false``; never empty, never repeated).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from django.http import QueryDict
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise

    Messages = dict[str, str | _StrPromise]

# The largest integer the audit database stores (a signed 64-bit integer, SQLite and PostgreSQL).
DB_INT_MAX = 2**63 - 1

_DIGITS = re.compile(r"[0-9]+")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


MAX_NAMED = 5  # unknown names named in one error; a body of 10,000 keys gets a short answer
MAX_NAME_CHARS = 64


def unknown_names(given: Iterable[str], known: Iterable[str], what: str) -> list[str]:
    """One sentence per name in ``given`` that is not in ``known``, with the nearest known name."""
    known = list(known)
    unknown = [name for name in given if name not in known]
    messages = [_unknown_name(name, known, what) for name in unknown[:MAX_NAMED]]
    if len(unknown) > MAX_NAMED:
        messages.append(f"({len(unknown) - MAX_NAMED} more unknown {what}s.)")
    return messages


def _unknown_name(name: str, known: list[str], what: str) -> str:
    shown = name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS] + "..."
    message = f"unknown {what} {shown!r}"
    close = difflib.get_close_matches(shown, known, n=1)
    if not close:
        # dryRun, DRY_RUN, dry-run: the same words spelled another way.
        folded = {_fold(k): k for k in known}
        close = [folded[_fold(shown)]] if _fold(shown) in folded else []
    return f"{message}; did you mean {close[0]!r}?" if close else f"{message}."


def _fold(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def refuse_unknown(given: Iterable[str], known: Iterable[str], what: str) -> None:
    messages = unknown_names(given, known, what)
    if messages:
        raise ValidationError({"non_field_errors": [" ".join(messages)]})


class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean only: ``"false"``, ``0`` and ``"no"`` are refused, not read as false."""

    default_error_messages: ClassVar[Messages] = {
        "invalid": "must be a JSON boolean (true or false), not {kind}."
    }

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        self.fail("invalid", kind=_json_type(data))
        raise AssertionError  # unreachable: fail() raises


class StrictCharField(serializers.CharField):
    """A JSON string only (``5`` is not ``"5"``), taken as sent: surrounding spaces are kept."""

    default_error_messages: ClassVar[Messages] = {"not_a_string": "must be a JSON string, not {kind}."}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string", kind=_json_type(data))
        value: str = super().to_internal_value(data)
        return value


class StrictListField(serializers.ListField):
    """A JSON array only (a repeated query parameter arrives as one): its items are strict fields."""

    default_error_messages: ClassVar[Messages] = {"not_a_list": "must be a JSON array, not {kind}."}

    def to_internal_value(self, data: Any) -> list[Any]:
        if not isinstance(data, list):
            self.fail("not_a_list", kind=_json_type(data))
        value: list[Any] = super().to_internal_value(data)
        return value


class StrictDictField(serializers.DictField):
    """A JSON object only."""

    default_error_messages: ClassVar[Messages] = {"not_a_dict": "must be a JSON object, not {kind}."}

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            self.fail("not_a_dict", kind=_json_type(data))
        value: dict[str, Any] = super().to_internal_value(data)
        return value


# The two bases carry comments, not docstrings: drf-spectacular would show a base's docstring
# as the description of every request schema without one of its own.


class StrictRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    # A JSON request body: an object whose every key is a declared field. The OpenAPI schema
    # says so too (``additionalProperties: false``, see api/schema.py).

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            refuse_unknown(data.keys(), self.fields.keys(), "field")
        return super().to_internal_value(data)


class JobRequestSerializer(StrictRequestSerializer):
    # The body of a long operation: it runs as a job, and ``async`` answers 202 with the job at
    # once. Added here because ``async`` is a Python keyword (no class attribute can be named so).

    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
        fields: dict[str, serializers.Field] = super().get_fields()  # type: ignore[type-arg]
        fields["async"] = StrictBooleanField(
            default=False, help_text="Answer 202 at once with the job (`Location: /jobs/{id}`) instead of "
            "waiting for its result.")
        return fields


class StrictQuerySerializer(serializers.Serializer):  # type: ignore[type-arg]
    # Query parameters: declared names only, each non-empty, repeated only for list fields.
    # Values are strings by nature and are parsed strictly by the field's type, whatever field
    # class declares it: an integer is digits only, a boolean ``true`` or ``false``.

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, QueryDict):
            return super().to_internal_value(data)
        refuse_unknown(data.keys(), self.fields.keys(), "query parameter")
        problems: dict[str, list[str]] = {}
        plain: dict[str, Any] = {}
        for name, values in data.lists():
            field = self.fields[name]
            many = isinstance(field, serializers.ListField)
            message = _query_problem(field, values, many)
            if message:
                problems[name] = [message]
            plain[name] = values if many else values[0]
        if problems:
            raise ValidationError(problems)
        # A plain mapping, not the query dict: DRF reads an absent boolean in "HTML input" as
        # false (``default_empty_html``), so a missing ``?success=`` filter would mean false.
        return super().to_internal_value(plain)


def _query_problem(field: serializers.Field, values: list[str], many: bool) -> str | None:  # type: ignore[type-arg]
    if not many and len(values) > 1:
        return "is given more than once."
    if any(value == "" for value in values):
        return "is empty; leave the parameter out instead."
    kind = field.child if isinstance(field, serializers.ListField) else field
    for value in values:
        if isinstance(kind, serializers.BooleanField) and value not in ("true", "false"):
            return "must be true or false."
        if isinstance(kind, serializers.IntegerField) and not _DIGITS.fullmatch(value):
            return f"must be an integer written in digits{_bounds(kind)}."
    return None


def _bounds(field: serializers.IntegerField) -> str:
    low, high = field.min_value, field.max_value
    if low is not None and high is not None:
        return f", from {low} to {high}"
    if low is not None:
        return f", at least {low}"
    return "" if high is None else f", at most {high}"


@functools.cache
def query_names(serializer_class: type[serializers.Serializer] | None) -> frozenset[str]:  # type: ignore[type-arg]
    """The query parameter names a view accepts: its query serializer's fields."""
    if serializer_class is None:
        return frozenset()
    return frozenset(serializer_class().fields.keys())
