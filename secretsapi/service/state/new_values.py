"""Where a unit's new value comes from: its source (an import), a token created at its vendor
(``generators.tokens``), a credential changed where it lives (``state.credentials``: database
users, IAM keys), or a generator. ``state.value_store`` records what each one brings beside it."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from secretsapi.service.credentials import is_credential
from secretsapi.service.definition.model import Definition, SecretDef, Unit
from secretsapi.service.errors import GeneratorError, LockEntryCorrupted
from secretsapi.service.generators import generate
from secretsapi.service.generators.tokens import issue, issued_record, issuer_of
from secretsapi.service.state.credentials import issue_for
from secretsapi.service.state.lockfile import LockDocument
from secretsapi.service.state.sources import SourceError, read_source
from secretsapi.service.targets import TargetContext


@dataclass(frozen=True)
class NewValue:
    value: str
    # The kind of source it was imported from (None: made here).
    source_kind: str | None = None
    # A token's record (kind, id, owner, expiry; never the token).
    issued: dict[str, Any] | None = None
    # A source credential's state (slot names and times; never a value).
    credential: dict[str, Any] | None = None


def new_value(secret: SecretDef, unit: Unit, definition: Definition, ctx: TargetContext, doc: LockDocument,
              now: datetime, *, allow_scripts: bool, cut_grace: bool = False) -> NewValue:
    """``unit``'s new value; GeneratorError when it cannot be had."""
    kind = unit.generator.kind
    if is_credential(kind):  # issued and verified at its source
        credential = issue_for(secret, unit, definition, doc, now, ctx, cut_grace=cut_grace)
        return NewValue(credential.value, credential=credential.state)
    source = unit.generator.source
    if source is not None:
        try:
            return NewValue(read_source(source, secret.name, definition, ctx), source.kind)
        except SourceError as exc:
            if source.required:
                raise GeneratorError(f"source resolution failed: {exc.message}") from None
            # ``required: false``: SecretZero falls back to the generator.
    if issuer_of(kind) is not None:  # replacing the token the targets hold now
        token = issue(unit.generator, ctx, now, _previous_token(doc, unit))
        return NewValue(token.value, issued=token.record)
    return NewValue(generate(unit.generator, allow_scripts=allow_scripts, cwd=definition.base_dir))


def _previous_token(doc: LockDocument, unit: Unit) -> dict[str, Any] | None:
    with contextlib.suppress(LockEntryCorrupted):
        entry = doc.entry(unit.lock_key)
        return issued_record(entry.extra) if entry is not None else None
    return None
