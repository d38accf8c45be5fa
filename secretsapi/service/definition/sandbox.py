"""The sandboxed Jinja environment expressions run in: what they may call, and how much each
operator, filter and method may build (checked against the running interpolation's budget)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any

from jinja2 import StrictUndefined
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.nodes import Concat
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment

from secretsapi.service.definition import budget
from secretsapi.service.definition.budget import format_bound, join_bound, replace_bound, size_of, weight

MAX_INT_BITS = 4_096
# Jinja's filters and tests whose output is bounded by their input (not center, indent, format,
# wordwrap, batch or slice, which a number argument can make huge).
_SAFE_FILTERS = (
    "abs", "capitalize", "count", "d", "default", "dictsort", "e", "escape", "first", "float", "int",
    "items", "join", "last", "length", "list", "lower", "map", "max", "min", "reject", "rejectattr",
    "replace", "reverse", "round", "select", "selectattr", "sort", "string", "striptags", "sum", "title",
    "tojson", "trim", "truncate", "unique", "upper", "urlencode", "wordcount",
)  # fmt: skip
_SAFE_TESTS = (
    "boolean", "defined", "divisibleby", "eq", "equalto", "even", "false", "float", "ge", "gt", "in",
    "integer", "iterable", "le", "lower", "lt", "mapping", "ne", "none", "number", "odd", "sameas",
    "sequence", "string", "true", "undefined", "upper",
)  # fmt: skip
# Filters that return their input's items or a number, never new text.
_REFERENCING = frozenset({
    "abs", "count", "d", "default", "dictsort", "first", "float", "int", "items", "last", "length", "map",
    "max", "min", "reject", "rejectattr", "round", "select", "selectattr",
})  # fmt: skip
# How much larger than its input a filter's output can be ('&' -> '&amp;', a 4-byte character
# -> twelve '%XX'); any other filter: 4 (an upper-cased 'ß' is 'SS'; a list of a text's characters).
_GROWTH = {"e": 6, "escape": 6, "tojson": 6, "urlencode": 12}
# Methods of text, lists and mappings whose result is bounded by the object alone.
_SHRINKING = frozenset({
    "capitalize", "casefold", "copy", "count", "endswith", "find", "get", "index", "isalnum", "isalpha",
    "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric", "isprintable", "isspace",
    "istitle", "isupper", "items", "keys", "lower", "lstrip", "partition", "removeprefix",
    "removesuffix", "rfind", "rindex", "rpartition", "rsplit", "rstrip", "split", "splitlines",
    "startswith", "strip", "swapcase", "title", "upper", "values",
})  # fmt: skip
_PADDING = frozenset({"center", "ljust", "rjust", "zfill"})


class _CodeGenerator(CodeGenerator):
    def visit_Concat(self, node: Concat, frame: Frame) -> None:
        # ``a ~ b ~ c``: joined by the environment, which measures before joining.
        self.write("environment.bounded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class Environment(SandboxedEnvironment):
    """Sandbox where ``var.items`` means the variable ``items``, never the dict method, and no
    operator, filter or method builds a value past the interpolation's string limit."""

    code_generator_class = _CodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        ints = [v for v in (left, right) if isinstance(v, int)]
        limit = budget.current().limits.string_bytes
        if operator == "**":
            if not isinstance(right, int | float) or abs(right) > 64:
                raise SecurityError("exponent too large")
            if isinstance(left, int) and left.bit_length() * abs(right) > MAX_INT_BITS:
                raise SecurityError("power too large")
        elif operator == "*" and len(ints) == 2:
            if ints[0].bit_length() + ints[1].bit_length() > MAX_INT_BITS:
                raise SecurityError("product too large")
        elif operator == "*" and ints:
            sequence = right if left is ints[0] else left
            budget.current().fit(size_of(sequence, limit) * max(0, ints[0]))
        elif operator == "+" and not isinstance(left, int | float):
            budget.current().fit(size_of(left, limit) + size_of(right, limit))
        elif operator == "%" and isinstance(left, str):
            arguments = right if isinstance(right, tuple) else (right,)
            budget.current().fit(format_bound(left, arguments, limit))
        return super().call_binop(context, operator, left, right)

    def bounded_concat(self, values: tuple[Any, ...]) -> str:
        limit = budget.current().limits.string_bytes
        budget.current().fit(join_bound(values, "", limit))
        return "".join(map(str, values))

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        # The sandbox hands out str.format wrapped: the string is the wrapped method's.
        owner = getattr(getattr(obj, "__wrapped__", obj), "__self__", None)
        if isinstance(owner, str | bytes | list | tuple | dict):
            name = getattr(obj, "__name__", "")
            if name == "join" and isinstance(owner, str) and args:
                args = (list(args[0]), *args[1:])  # measured, then joined: iterated once only
            budget.current().fit(_method_bound(owner, name, args, kwargs))
        return super().call(context, obj, *args, **kwargs)

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, Mapping):
            try:
                return obj[attribute]
            except KeyError:
                dotted = getattr(obj, "dotted", None)
                where = dotted(attribute) if dotted is not None else attribute
                return self.undefined(hint=f"undefined variable '{where}'", obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, Mapping) and isinstance(argument, str):
            return self.getattr(obj, argument)
        return super().getitem(obj, argument)


def _method_bound(owner: Any, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int:
    limit = budget.current().limits.string_bytes
    own = size_of(owner, limit)
    if name in _SHRINKING:
        return own
    if name in _PADDING and args and isinstance(args[0], int):
        return max(own, args[0])
    if isinstance(owner, str) and name == "replace" and len(args) >= 2:
        count = args[2] if len(args) > 2 and isinstance(args[2], int) else -1
        return replace_bound(owner, str(args[0]), str(args[1]), count)
    if isinstance(owner, str) and name == "join" and args and isinstance(args[0], Collection):
        return join_bound(args[0], owner, limit)
    if isinstance(owner, str) and name in ("format", "format_map"):
        return format_bound(owner, [*args, *kwargs.values()], limit)
    if isinstance(owner, str) and name == "expandtabs":
        tabsize = args[0] if args and isinstance(args[0], int) else 8
        return own + owner.count("\t") * abs(tabsize)
    # Any other method: as if each character could become all of its arguments (translate).
    return (own + 1) * (1 + sum(weight(a, limit) for a in [*args, *kwargs.values()]))


def _bounded(name: str, apply: Callable[..., Any]) -> Callable[..., Any]:
    """``apply`` refusing inputs whose output could pass the string limit."""
    # Filters that take the context or environment get it first (Jinja reads the marker that
    # functools.wraps copies).
    skip = 1 if getattr(apply, "jinja_pass_arg", None) is not None else 0

    @functools.wraps(apply)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        current = budget.current()
        limit = current.limits.string_bytes
        value, rest = args[skip], list(args[skip + 1 :])
        if name == "join":
            value = list(value)  # measured, then joined: an iterator is read once only
            current.fit(join_bound(value, str(rest[0] if rest else kwargs.get("d", "")), limit))
        elif name == "sum":
            value = list(value)
            start = rest[1] if len(rest) > 1 else kwargs.get("start", 0)
            current.fit(size_of(value, limit) + size_of(start, limit))
        elif name == "replace":
            current.fit_value(value)
            value = str(value)
            old = str(rest[0] if rest else kwargs.get("old", ""))
            new = str(rest[1] if len(rest) > 1 else kwargs.get("new", ""))
            count = rest[2] if len(rest) > 2 and isinstance(rest[2], int) else kwargs.get("count")
            current.fit(replace_bound(value, old, new, count if isinstance(count, int) else -1))
        elif name not in _REFERENCING:
            current.fit(size_of(value, limit) * _GROWTH.get(name, 4))
        return apply(*args[:skip], value, *rest, **kwargs)

    return bounded


def _replace(value: str, old: str, new: str, count: int | None = None) -> str:
    return value.replace(old, new, -1 if count is None else count)


class FalsyUndefined(StrictUndefined):
    """Strict everywhere but in a test: ``var.x or 'd'`` gives 'd', as in SecretZero."""

    def __bool__(self) -> bool:  # type: ignore[override]  # StrictUndefined types it as raising
        return False


ENV = Environment(undefined=FalsyUndefined, autoescape=False)
ENV.globals.clear()  # the only name an expression sees is ``var``
ENV.filters = {name: _bounded(name, ENV.filters[name]) for name in _SAFE_FILTERS}
ENV.filters["replace"] = _bounded("replace", _replace)
ENV.tests = {name: ENV.tests[name] for name in _SAFE_TESTS}
