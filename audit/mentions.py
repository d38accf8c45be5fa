"""Which secrets one audit row is about: the names ``?secret=`` finds it by."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

RESOURCE_PREFIX = "secret:"
# Details keys holding lists of secret names (sync, agent sync, rotation, drift; clean's and
# import's lockfile keys, and import's requested secrets).
NAME_LISTS = ("generated", "skipped", "failed", "repaired", "rotated", "secrets_with_drift", "unreadable",
              "removed", "recorded", "secret_names")


def mentioned_secrets(resource: str, details: Mapping[str, Any]) -> list[str]:
    """The secret names of ``resource`` (``secret:<name>``) and ``details``, each once, in order.

    ``details`` names them in ``secret_name`` (the request), the lists of ``NAME_LISTS`` and
    the ``secret`` of each ``errors`` item; anything else there (counts, flags) is ignored.
    """
    names: dict[str, None] = {}
    if resource.startswith(RESOURCE_PREFIX):
        names[resource[len(RESOURCE_PREFIX):]] = None
    requested = details.get("secret_name")
    if isinstance(requested, str):
        names[requested] = None
    for key in NAME_LISTS:
        names.update(dict.fromkeys(_strings(details.get(key))))
    errors = details.get("errors")
    if isinstance(errors, list):
        names.update(dict.fromkeys(_strings(e.get("secret") for e in errors if isinstance(e, Mapping))))
    names.pop("", None)
    return list(names)


def _strings(values: Any) -> Iterable[str]:
    if isinstance(values, (list, tuple)) or hasattr(values, "__next__"):
        return [v for v in values if isinstance(v, str)]
    return []
