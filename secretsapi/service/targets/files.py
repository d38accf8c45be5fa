"""``local/file``: secrets as keys of a dotenv, JSON, YAML, TOML or tfvars file."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.errors import TargetError
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.formats import FORMATS, FileFormat, infer_format
from secretsapi.service.targets.formats.errors import FormatError
from secretsapi.service.targets.paths import Confined, confined_path, lexical_key, read_text, write_text
from secretsapi.service.targets.remote import collect, placement_key
from secretsapi.service.targets.schema import KindSchema, ProviderSchema, Setting
from secretsapi.service.util.hashing import sha256_text, sha256_value


def _value_hash(value: Any) -> str:
    if isinstance(value, str):
        return sha256_text(value)
    try:
        return sha256_value(value)
    except TypeError:  # TOML dates and the like: hash their text
        return sha256_text(str(value))


LOCAL = ProviderSchema(
    "local", "local files",
    "Files inside the allowed target roots (SERVICE_TARGET_ROOTS, by default the definition folder); "
    "needs no providers entry.")
PROVIDERS = (LOCAL,)


class LocalFileKind(Kind):
    schema = KindSchema(
        "local/file",
        "A key in a local file inside the allowed target roots, written atomically (mode 0600 when new). "
        "Comments and other keys are kept, except that YAML comments are lost when the file must be "
        "re-dumped (keys whose current value is not a one-line scalar).",
        {
            "path": Setting("path", "file path, relative to the definition folder or absolute, inside "
                                    "SERVICE_TARGET_ROOTS", required=True),
            "format": Setting("string", "dotenv | json | yaml | toml | tfvars; inferred from the extension, "
                                        "dotenv when unknown", strict=False),
            "key": Setting("string", "key in the file; the secret (or field) name by default", strict=False),
            "merge": Setting("boolean", "keep the file's other keys; false: the file holds only the keys "
                                        "written in one sync", True, strict=False),
        },
        target_id="`local/file/<path>`",
        example={'path': 'out/app.env'}
    )

    def advise(self, target: TargetSpec, where: str) -> list[str]:
        """Validation's warnings: a format no writer has (SecretZero accepts it there and fails the
        target at sync, as this service does), and settings read loosely, as SecretZero reads them."""
        config = target.config
        warnings = []
        fmt = FORMATS.get(format_name(config))
        if fmt is None:
            warnings.append(f"{where}: config.format {config.get('format')!r} is not one of "
                            f"{', '.join(FORMATS)}: this target fails at sync")
        key = config.get("key")
        if fmt is not None and isinstance(key, str) and key:
            try:
                fmt.render(None, {key: ""})  # the writer's own check of the key's name
            except FormatError as exc:
                warnings.append(f"{where}: {exc}: this target fails at sync")
        if not isinstance(config.get("merge", True), bool):
            warnings.append(f"{where}: config.merge is not true or false: the file's other keys are kept")
        if key is not None and not isinstance(key, str):
            warnings.append(f"{where}: config.key is not a string: its text is used")
        return warnings

    def target_id(self, target: TargetSpec, ctx: TargetContext) -> str:
        return f"{target.provider}/{target.kind}/{target.config.get('path')}"

    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        return str(target.config.get("path"))

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, lexical_key(ctx.base_dir, target.config, "path"))

    def write(self, items: Sequence[tuple[Placement, str]], ctx: TargetContext) -> dict[str, str]:
        """Set every key of the group with one read and one atomic write of the file."""
        if not items:
            return {}
        placements = [placement for placement, _ in items]
        path, location, fmt = self._resolve(placements, ctx)
        updates = collect(items, placement_key, location)
        # One merge=false placement makes the file exclusive to this write.
        merge = all(p.target.config.get("merge", True) is not False for p in placements)
        try:
            existing = read_text(path, location)
        except TargetError:
            if merge:
                raise
            existing = None  # merge=false replaces the file whatever it holds
        try:
            text = fmt.rewrite(existing if merge else None, updates)
        except FormatError as exc:
            raise TargetError(f"{location}: {exc}") from None
        if text != existing:
            write_text(path, text, location)
        return {key: sha256_text(value) for key, value in updates.items()}

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        path, location, fmt = self._resolve(items, ctx)
        text = read_text(path, location)
        if text is None:
            return {p.key: ReadBack(False, None, location) for p in items}
        try:
            stored = fmt.load(text)
        except FormatError as exc:
            raise TargetError(f"{location}: {exc}") from None
        # SecretZero's reading never fails: it skips the lines it cannot split.
        theirs = fmt.load_secretzero(text) if fmt.load_secretzero else {}
        found: dict[str, ReadBack] = {}
        for p in items:
            if p.key not in stored:
                found[p.key] = ReadBack(False, None, location)
                continue
            value = stored[p.key]
            other = theirs.get(p.key)
            misencoded = other if isinstance(other, str) and other != value else None
            found[p.key] = ReadBack(True, _value_hash(value), location, _text(value), misencoded)
        return found

    def _resolve(self, placements: Sequence[Placement], ctx: TargetContext
                 ) -> tuple[Confined, str, FileFormat]:
        first = placements[0].target
        location = self.location(first, ctx)
        names = {self._format_name(p.target) for p in placements}
        if len(names) != 1:
            formats = ", ".join(sorted(names))
            raise TargetError(f"{location}: placements disagree on the format ({formats})")
        name = names.pop()
        if name not in FORMATS:
            raise TargetError(f"{location}: unknown format '{name}'")
        confined = confined_path(ctx.base_dir, first.config, "path", ctx.target_roots, ctx.service_paths)
        return confined, location, FORMATS[name]

    @staticmethod
    def _format_name(target: TargetSpec) -> str:
        return format_name(target.config)


def format_name(config: Mapping[str, Any]) -> str:
    """SecretZero's reading of ``config.format``: trimmed and lower-cased; blank or unset, the
    format the path's extension names."""
    fmt = config.get("format")
    text = "" if fmt is None else str(fmt).strip().lower()
    return text or infer_format(str(config.get("path", "")))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


KINDS = (LocalFileKind(),)
