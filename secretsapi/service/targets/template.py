"""``local/template``: a sandboxed Jinja2 template rendered with every secret into a local file."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import jinja2
from jinja2 import meta, nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

from secretsapi.service.definition.deadline import DeadlinePassed, deadline
from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import ServiceError, TargetError
from secretsapi.service.targets.base import TargetContext
from secretsapi.service.targets.output_file import OutputFileKind, output_path
from secretsapi.service.targets.paths import confined_path, read_text
from secretsapi.service.targets.schema import KindSchema, Setting


class _NoValue(Exception):
    """A template used a unit that has no value; not a LookupError, so Jinja lets it through."""

    def __init__(self, key: str, why: str | None = None) -> None:
        super().__init__(key)
        self.key = key
        self.why = why  # why it could not be read, when a target could not be


class _Secrets(Mapping[str, Any]):
    """lock key -> value, fetched on first use, so a template costs only the values it uses.

    ``<secret>.<field>`` units are also reachable as ``secrets.<secret>.<field>`` when no
    unit is named ``<secret>`` itself. Names that clash with Mapping methods (``items``,
    ``keys``, ``get``, ``values``) need subscript syntax: ``secrets['items']``.
    """

    def __init__(self, keys: Sequence[str], value_of: Callable[[str], str | None],
                 prefix: str = "", cache: dict[str, str] | None = None) -> None:
        self._value_of = value_of
        self._prefix = prefix
        # Shared with nested views: lock key -> value, also the list of values fetched so far.
        self.fetched: dict[str, str] = {} if cache is None else cache
        # Definition order; iteration lists lock keys only, nested views are extra access paths.
        self._order = [k[len(prefix):] for k in keys if k.startswith(prefix)]
        self._leaves = set(self._order)
        self._groups: dict[str, list[str]] = {}
        for leaf in self._order:
            head, dot, _ = leaf.rpartition(".")
            if dot and head not in self._leaves:
                self._groups.setdefault(head, []).append(prefix + leaf)

    def __getitem__(self, name: str) -> Any:
        if name in self._leaves:
            key = self._prefix + name
            if key not in self.fetched:
                try:
                    value = self._value_of(key)
                except TargetError as exc:
                    raise _NoValue(key, exc.message) from None
                if value is None:
                    raise _NoValue(key)
                self.fetched[key] = value
            return self.fetched[key]
        if name in self._groups:
            return _Secrets(self._groups[name], self._value_of, f"{self._prefix}{name}.",
                            self.fetched)
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return name in self._leaves or name in self._groups

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


# An empty view, whose attributes Jinja's ``secrets.<name>`` finds before any key.
_PROBE = _Secrets((), lambda key: None)


def _environment() -> SandboxedEnvironment:
    return SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False,
                                keep_trailing_newline=True)


def _bare_names(keys: Sequence[str]) -> dict[str, str]:
    """SecretZero's bare placeholders: ``{{ db_password }}`` for a secret, ``{{ field }}`` for a
    template field (SecretZero names a field by itself), each to its lock key. A field name that
    is also a secret's, or two secrets' field, stays with the first in definition order."""
    names: dict[str, str] = {}
    for key in keys:
        names.setdefault(key, key)
    for key in keys:
        names.setdefault(key.rpartition(".")[2], key)
    return names


def rendered_keys(source: str, lock_keys: Sequence[str]) -> frozenset[str] | None:
    """The lock keys a render of ``source`` can use, read from its syntax; None when it can use
    any (it iterates ``secrets``, indexes it with a computed key, or hands it on). A superset of
    what one render fetches: both branches of a condition count. TargetError when it does not parse.
    """
    try:
        parsed = _environment().parse(source)
    except jinja2.TemplateSyntaxError as exc:
        raise TargetError(f"line {exc.lineno}: {exc.message}") from None
    bare = _bare_names(lock_keys)
    undeclared = meta.find_undeclared_variables(parsed)
    used = {bare[name] for name in undeclared if name in bare and name != "secrets"}
    if "secrets" not in undeclared:
        return frozenset(used)
    leaves = set(lock_keys)
    parents: dict[int, nodes.Node] = {}
    stack: list[nodes.Node] = [parsed]
    while stack:
        node = stack.pop()
        for child in node.iter_child_nodes():
            parents[id(child)] = node
            stack.append(child)
        if isinstance(node, nodes.Name) and node.name == "secrets" and node.ctx == "load":
            keys = _keys_reached(node, parents, leaves)
            if keys is None:
                return None
            used.update(keys)
    return frozenset(used)


def _keys_reached(name: nodes.Name, parents: dict[int, nodes.Node], leaves: set[str]) -> set[str] | None:
    """What one use of ``secrets`` reaches: ``secrets.a``, ``secrets['a.b']``, ``secrets.a.b``...
    (a lock key, or every key of a group left unsubscripted); None for any other use."""
    path = ""
    node: nodes.Node = name
    while True:
        parent = parents.get(id(node))
        step = _constant_step(parent, node)
        if step is None:
            break
        path = f"{path}.{step}" if path else step
        if path in leaves:
            return {path}
        node = parent  # type: ignore[assignment]  # _constant_step returned a step: parent is a node
    if not path:
        return None
    group = [key for key in leaves if key.startswith(path + ".")]
    return set(group) if group else set()  # nothing there: the render fails, it renders no value


def _constant_step(parent: nodes.Node | None, child: nodes.Node) -> str | None:
    """The key ``parent`` looks ``child`` up by, when it is a constant; None for any other parent.
    ``secrets.items`` and the other Mapping methods are methods to Jinja, not keys: None."""
    if isinstance(parent, nodes.Getattr) and parent.node is child:
        return None if hasattr(_PROBE, parent.attr) else parent.attr
    if isinstance(parent, nodes.Getitem) and parent.node is child and isinstance(parent.arg, nodes.Const):
        return parent.arg.value if isinstance(parent.arg.value, str) else None
    return None


def render(source: str, name: str, ctx: TargetContext) -> str:
    """Render ``source``; TargetError messages name the template and never quote values.

    Every unit is ``secrets['<lock key>']``; as in SecretZero, secrets and fields are also
    bare variables (``{{ db_password }}``), fetched only when the template names them.
    """
    secrets = _Secrets(ctx.lock_keys, ctx.value_of)
    try:
        environment = _environment()
        parsed = environment.parse(source)
        bare = _bare_names(ctx.lock_keys)
        used = [n for n in sorted(meta.find_undeclared_variables(parsed)) if n in bare and n != "secrets"]
        context = {n: secrets[bare[n]] for n in used}
        compiled = environment.from_string(parsed)
        # Only the render is traced: compiling is bounded by the template's size.
        with deadline(ctx.render_seconds):
            return compiled.render(**context, secrets=secrets)
    except DeadlinePassed as exc:
        raise TargetError(f"template '{name}' {exc}: its rendering was stopped") from None
    except jinja2.TemplateSyntaxError as exc:
        # The message comes from the template text, which holds no values.
        raise TargetError(f"template '{name}' line {exc.lineno}: {exc.message}") from None
    except jinja2.UndefinedError as exc:
        # Names the missing variable, unless the template looked something up by a secret
        # (``{{ table[secrets.x] }}``) and the "name" is a value.
        message = exc.message or "undefined variable"
        if any(value and value in message for value in secrets.fetched.values()):
            message = "undefined variable"
        raise TargetError(f"template '{name}': {message}") from None
    except _NoValue as exc:
        raise TargetError(f"template '{name}' uses '{exc.key}', which has no value"
                          + (f": {exc.why}" if exc.why else "")) from None
    except SecurityError:
        raise TargetError(f"template '{name}' uses an operation the sandbox forbids") from None
    except ServiceError:
        raise
    except Exception as exc:
        # Filters' messages can quote their input, i.e. a secret: only the type is safe.
        raise TargetError(f"template '{name}' failed to render ({type(exc).__name__})") from None


_ID_KEYS = ("target_id", "record_uid", "name", "path", "title")


class LocalTemplateKind(OutputFileKind):
    schema = KindSchema(
        "local/template",
        "A file rendered from a sandboxed Jinja2 template with every secret as secrets['<lock key>'] "
        "(template fields also as secrets.<secret>.<field>) and, as in SecretZero, as bare {{ name }} "
        "(a field by its own name); written atomically, mode 0600 when new. The recorded hash is the output's.",
        {
            "template_path": Setting("path", "Jinja2 template, relative to the definition folder or absolute",
                                     required=True),
            "output_path": Setting("path", "rendered file, relative to the definition folder or absolute",
                                   required=True),
            "name": Setting("string", "names the target in the lockfile (local/template/<name>; SecretZero also "
                                      "takes target_id, record_uid, path, title)", strict=False),
            "overwrite": Setting("boolean", "accepted for SecretZero, which ignores it too", True, strict=False),
        },
        target_id="SecretZero's: `local/template/<name>` (the first of `target_id`, `record_uid`, `name`, "
                  "`path`, `title`), else `local/template/`",
        example={'template_path': 'app.conf.j2', 'output_path': 'out/app.conf'}
    )

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        """SecretZero's (``SyncEngine._build_target_id``): the first of ``target_id``,
        ``record_uid``, ``name``, ``path``, ``title`` in the config, else nothing:
        ``local/template/`` for a target that names none."""
        config = target.config
        identifier = next((config[k] for k in _ID_KEYS if config.get(k)), "")
        return f"{target.provider}/{target.kind}/{identifier}"

    def renders(self, target: TargetSpec, ctx: TargetContext) -> frozenset[str] | None:
        """``rendered_keys`` of the target's template (None: any unit); TargetError when it cannot
        be read or parsed (the message names the template, never a value)."""
        name, source = self._source(target, ctx)
        try:
            return rendered_keys(source, ctx.lock_keys)
        except TargetError as exc:
            raise TargetError(f"template '{name}' {exc.message}") from None

    def _source(self, target: TargetSpec, ctx: TargetContext) -> tuple[str, str]:
        name = str(target.config.get("template_path"))
        path = confined_path(ctx.base_dir, target.config, "template_path", ctx.target_roots, ctx.service_paths)
        source = read_text(path, f"template '{name}'")
        if source is None:
            raise TargetError(f"template '{name}' not found")
        return name, source

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        """Render once for the whole group; the values come from ctx.value_of, not ``items``."""
        if not items:
            return {}
        target = items[0][0].target
        location = self.location(target, ctx)
        sources = {str(p.target.config.get("template_path")) for p, _ in items}
        if len(sources) != 1:
            raise TargetError(f"{location}: placements name different templates")
        template_name = sources.pop()
        template_path = confined_path(ctx.base_dir, target.config, "template_path", ctx.target_roots,
                                      ctx.service_paths)
        path = output_path(target, ctx)  # refused before the template is read, as a file target's
        source = read_text(template_path, f"template '{template_name}'")
        if source is None:
            raise TargetError(f"template '{template_name}' not found")
        return self.store([p for p, _ in items], render(source, template_name, ctx), path, ctx)


KINDS = (LocalTemplateKind(),)
