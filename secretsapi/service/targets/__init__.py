"""Target kinds (local files, templates, remote stores) behind one registry."""

from __future__ import annotations

from secretsapi.service.targets.base import ReadBack, TargetContext, TargetKind
from secretsapi.service.targets.registry import get_kind, kinds, register

__all__ = ["ReadBack", "TargetContext", "TargetKind", "get_kind", "kinds", "register"]
