"""Variable interpolation (``{{ var.x }}``, ``${NAME:-default}``) in a sandboxed Jinja environment."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import TemplateError, Undefined, UndefinedError
from jinja2.exceptions import SecurityError

from secretsapi.service.definition.budget import Budget, InterpolationLimits, TooLarge, enter, leave, size_of
from secretsapi.service.definition.deadline import DeadlinePassed
from secretsapi.service.definition.readable_environ import readable
from secretsapi.service.definition.sandbox import ENV
from secretsapi.service.errors import DefinitionInvalid

# One token at a time, so text substituted from a value is never interpreted again.
_TOKEN = re.compile(
    r"\{\{(?P<expr>.*?)\}\}|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}",
    re.DOTALL,
)


def _may_hold_token(text: str) -> bool:
    """False when ``_TOKEN`` cannot match: two substring searches instead of a regex scan."""
    return "{{" in text or "${" in text


UNRENDERED_KEY = "agent_instructions"
_UNDEFINED_NAME = re.compile(r"'([^']+)' is undefined")

Path_ = tuple[Any, ...]
MAX_DEPTH = 40  # variables referencing variables; each level costs ~15 interpreter frames


class _Cycle(Exception):
    def __init__(self, chain: list[Path_]) -> None:
        super().__init__(" -> ".join(_dotted(p) for p in chain))
        self.chain = chain


class _AlreadyReported(Exception):
    """A variable that failed to resolve is used: its own error was reported already."""


def _dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _LazyVars(Mapping[str, Any]):
    """A view of (part of) the variables that resolves each string on first use."""

    def __init__(self, resolver: _Resolver, path: Path_) -> None:
        self._resolver = resolver
        self._path = path

    def _raw(self) -> Mapping[Any, Any]:
        return self._resolver.raw_at(self._path)  # type: ignore[no-any-return]

    def __getitem__(self, key: Any) -> Any:
        if key not in self._raw():
            raise KeyError(key)
        return self._resolver.resolve((*self._path, key))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._raw())

    def __len__(self) -> int:
        return len(self._raw())

    def __str__(self) -> str:
        return str(_materialize(self))

    def dotted(self, key: str) -> str:
        return _dotted((*self._path, key))


def _materialize(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _materialize(value[k]) for k in value}
    if isinstance(value, list):
        return [_materialize(v) for v in value]
    return value


class _Resolver:
    """Resolves variables that reference other variables, detecting cycles."""

    def __init__(self, raw: Mapping[str, Any], environ: Mapping[str, str], budget: Budget) -> None:
        self.raw = raw
        self.environ = environ
        self.budget = budget
        self.done: dict[Path_, Any] = {}
        self.failed: set[Path_] = set()
        self.stack: list[Path_] = []
        self.errors: list[str] = []
        self.undefined: dict[Path_, str] = {}

    def raw_at(self, path: Path_) -> Any:
        node: Any = self.raw
        for part in path:
            node = node[part]
        return node

    def resolve(self, path: Path_) -> Any:
        if path in self.done:
            return self.done[path]
        if path in self.failed:
            if path in self.undefined:
                raise _UndefinedName(self.undefined[path])
            raise _AlreadyReported
        raw = self.raw_at(path)
        if isinstance(raw, Mapping):
            return _LazyVars(self, path)
        if isinstance(raw, list):
            return [self.resolve((*path, i)) for i in range(len(raw))]
        if not isinstance(raw, str):
            return raw
        if path in self.stack:
            raise _Cycle([*self.stack[self.stack.index(path) :], path])
        if len(self.stack) >= MAX_DEPTH:
            self._fail(path, f"variables reference each other more than {MAX_DEPTH} levels deep")
        self.stack.append(path)
        try:
            value = _render_string(raw, self)
            if value is not raw:
                self.budget.spend(value)
        except _AlreadyReported:
            self.failed.add(path)  # so a failed chain is walked once, not once per variable
            raise
        except _Cycle as exc:
            if exc.chain[0] != path:
                raise  # reported once, by the variable where the cycle started
            self._fail(path, f"variable cycle {exc}")
        except _UndefinedName as exc:
            # Not an error of the variable (SecretZero keeps it as written): the places that
            # use it decide.
            self.failed.add(path)
            # Named once, at the variable that uses the undefined name, however long the chain.
            message = str(exc)
            self.undefined[path] = message if message.startswith("variable ") else (
                f"variable '{_dotted(path)}' uses an {message}"
            )
            raise _UndefinedName(self.undefined[path]) from None
        except (_RenderError, TooLarge) as exc:
            self._fail(path, str(exc))
        finally:
            self.stack.pop()
        self.done[path] = value
        return value

    def _fail(self, path: Path_, message: str) -> None:
        # Recorded at the variable itself, so users of the variable do not repeat it.
        self.failed.add(path)
        self.errors.append(f"variables.{_dotted(path)}: {message}")
        raise _AlreadyReported

    def lookup_name(self, name: str) -> tuple[bool, Any]:
        if name in self.raw:
            return True, self.resolve((name,))
        if name in self.environ:
            return True, self.environ[name]
        return False, None

    def resolve_all(self) -> dict[str, Any]:
        return {key: self._resolve_tree((key,)) for key in self.raw}

    def _resolve_tree(self, path: Path_) -> Any:
        raw = self.raw_at(path)
        if isinstance(raw, Mapping):
            return {k: self._resolve_tree((*path, k)) for k in raw}
        if isinstance(raw, list):
            return [self._resolve_tree((*path, i)) for i in range(len(raw))]
        if not isinstance(raw, str):
            return raw
        try:
            return _materialize(self.resolve(path))
        except (_AlreadyReported, _UndefinedName):
            return raw


class _RenderError(Exception):
    pass


class _UndefinedName(_RenderError):
    """An undefined variable: left as written, and judged by the place that uses it."""


@functools.lru_cache(maxsize=1024)
def _compiled(expr: str) -> Any:
    # The same few expressions ({{ var.env }}) recur throughout a file: parse each once.
    return ENV.compile_expression(expr, undefined_to_none=False)


def _evaluate(expr: str, resolver: _Resolver) -> Any:
    # The sandbox's operators and filters measure against this interpolation's budget.
    token = enter(resolver.budget)
    try:
        # Checked before each expression, not traced through it (deadline.py): an expression has
        # no loop of its own and what its operators build is bounded, while tracing every one
        # doubled the cost of loading a large definition.
        resolver.budget.check_deadline()
        result = _compiled(expr)(var=_LazyVars(resolver, ()))
        if isinstance(result, Undefined):
            str(result)  # raises UndefinedError with the variable named
        return result
    except DeadlinePassed as exc:
        resolver.budget.exhausted = True  # nothing more is rendered: reported once
        raise _RenderError(f"interpolation {exc}") from None
    except UndefinedError as exc:
        message = str(exc.message or "undefined variable")
        found = _UNDEFINED_NAME.fullmatch(message)
        raise _UndefinedName(f"undefined variable '{found.group(1)}'" if found else message) from None
    except SecurityError:
        raise _RenderError("expression is not allowed in the sandbox") from None
    except TemplateError:
        # Jinja's own message may quote the string, which can be a static secret value.
        raise _RenderError("invalid template expression") from None
    except (_Cycle, _AlreadyReported, _RenderError, TooLarge):
        raise
    except Exception:  # filters and operators raise anything; never echo it
        raise _RenderError("template expression failed") from None
    finally:
        leave(token)


def _substitute(match: re.Match[str], resolver: _Resolver) -> Any:
    if match.group("expr") is not None:
        return _evaluate(match.group("expr"), resolver)
    name = match.group("name")
    found, value = resolver.lookup_name(name)
    default = match.group("default")
    if default is not None and (not found or value == ""):
        return default
    if not found:
        raise _UndefinedName(f"undefined variable '{name}'")
    return value


def _render_string(text: str, resolver: _Resolver) -> Any:
    matches = list(_TOKEN.finditer(text))
    if not matches:
        return text
    if resolver.budget.exhausted:
        raise _AlreadyReported  # the rendered definition is over its bound: reported once
    if len(matches) == 1 and matches[0].span() == (0, len(text)):
        # A string that is exactly one expression keeps the value's type.
        value = _materialize(_substitute(matches[0], resolver))
        resolver.budget.fit_value(value)
        return value
    values: list[Any] = []
    size = len(text) - sum(match.end() - match.start() for match in matches)  # the literal text
    limit = resolver.budget.limits.string_bytes
    for match in matches:
        values.append(_materialize(_substitute(match, resolver)))
        # Measured before anything is joined: each part holds a reference, not a copy.
        size += size_of(values[-1], limit)
        resolver.budget.fit(size)
    parts: list[str] = []
    last = 0
    for match, value in zip(matches, values, strict=True):
        parts.append(text[last : match.start()])
        parts.append("" if value is None else str(value))
        last = match.end()
    parts.append(text[last:])
    return "".join(parts)


class Interpolator:
    """Resolves the variables once, then renders any number of values against them.

    Errors are collected as messages naming the place (``secrets[0].config.path: ...``);
    ``errors`` starts with those found while resolving the variables themselves.
    ``interpolated`` holds the places whose value came out of a substitution: messages must
    not echo those, since they may carry the process environment. ``unresolved`` maps the
    places that use an undefined variable (left as written there, as SecretZero does) to a
    message: the checker decides, by place, whether that matters. ``agent_instructions`` are
    never rendered (SecretZero renders them later, per secret).
    """

    def __init__(
        self, variables: Mapping[str, Any], environ: Mapping[str, str] | None = None,
        limits: InterpolationLimits | None = None,
    ) -> None:
        self.budget = Budget(limits or InterpolationLimits())
        self._resolver = _Resolver(variables, readable(environ), self.budget)
        self.variables: dict[str, Any] = self._resolver.resolve_all()
        self.errors: list[str] = list(self._resolver.errors)
        self.interpolated: set[str] = set()
        self.unresolved: dict[str, str] = {}

    def shown(self, value: Any, where: str) -> str:
        """``value`` quoted for a message, unless it was interpolated at ``where``."""
        return "the interpolated value" if where in self.interpolated else repr(value)

    def render(self, value: Any, where: str) -> Any:
        """Interpolate every string inside ``value`` (keys excepted); failures become errors.

        What holds no expression is returned as it is, not copied (values are never mutated),
        so a large definition does not exist twice while it is checked; places are named only
        for the strings that may hold an expression.
        """
        if isinstance(value, Mapping):
            out: dict[Any, Any] | None = None
            for key, item in value.items():
                if (type(item) is str and not _may_hold_token(item)) or key == UNRENDERED_KEY:
                    continue
                rendered = self.render(item, f"{where}.{key}" if where else str(key))
                if rendered is not item:
                    out = dict(value) if out is None else out
                    out[key] = rendered
            return value if out is None else out
        if isinstance(value, list):
            changed: list[Any] | None = None
            for index, item in enumerate(value):
                if type(item) is str and not _may_hold_token(item):
                    continue
                rendered = self.render(item, f"{where}[{index}]")
                if rendered is not item:
                    changed = list(value) if changed is None else changed
                    changed[index] = rendered
            return value if changed is None else changed
        if not isinstance(value, str):
            return value
        try:
            rendered = _render_string(value, self._resolver)
            if rendered is not value:
                self.interpolated.add(where)
                self.budget.spend(rendered)
            return rendered
        except _AlreadyReported:
            return value
        except _Cycle as exc:
            self.errors.append(f"{where}: variable cycle {exc}")
        except _UndefinedName as exc:
            self.unresolved[where] = str(exc)
        except (_RenderError, TooLarge) as exc:
            self.errors.append(f"{where}: {exc}")
        return value


def interpolate(
    value: Any, *, variables: Mapping[str, Any], environ: Mapping[str, str] | None = None, where: str = "",
    limits: InterpolationLimits | None = None,
) -> Any:
    """Render ``value`` at once, raising DefinitionInvalid with every problem found."""
    interpolator = Interpolator(variables, environ, limits)
    rendered = interpolator.render(value, where)
    problems = interpolator.errors + [f"{k}: {v}" for k, v in interpolator.unresolved.items()]
    if problems:
        raise DefinitionInvalid(problems)
    return rendered
