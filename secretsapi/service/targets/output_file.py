"""Kinds that render one local file at ``output_path`` from their group's placements, recording
the file's hash (``local/template``, ``kubernetes/external_secret``): where it lies, how
placements share it, how it is stored only when it changed, and read back."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from secretsapi.service.definition.model import Placement, TargetSpec
from secretsapi.service.targets.base import Kind, ReadBack, TargetContext
from secretsapi.service.targets.paths import Confined, confined_path, lexical_key, read_hash, write_text
from secretsapi.service.util.hashing import sha256_text


def output_path(target: TargetSpec, ctx: TargetContext) -> Confined:
    """``output_path``, confined like a ``local/file`` path."""
    return confined_path(ctx.base_dir, target.config, "output_path", ctx.target_roots, ctx.service_paths)


class OutputFileKind(Kind):
    def location(self, target: TargetSpec, ctx: TargetContext) -> str:
        return str(target.config.get("output_path"))

    def group(self, target: TargetSpec, ctx: TargetContext) -> Hashable:
        return (self.type, lexical_key(ctx.base_dir, target.config, "output_path"))

    def read(self, items: Sequence[Placement], ctx: TargetContext) -> dict[str, ReadBack]:
        if not items:
            return {}
        location = self.location(items[0].target, ctx)
        digest = read_hash(output_path(items[0].target, ctx), location)
        return {p.key: ReadBack(digest is not None, digest, location) for p in items}

    def store(self, placements: Sequence[Placement], text: str, path: Confined, ctx: TargetContext) -> dict[str, str]:
        """Write ``text`` at ``path`` unless the file holds it already; every placement records its hash."""
        location = self.location(placements[0].target, ctx)
        digest = sha256_text(text)
        if read_hash(path, location) != digest:
            write_text(path, text, location)
        return {p.key: digest for p in placements}
