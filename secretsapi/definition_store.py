"""Parsed definitions (and what a status reads of them and of the lockfile) shared by this
host's processes, in Django's ``definitions`` cache.

A command line run parses the definition once per process; for 20,000 secrets that was most
of ``manage.py status``. A status reads just the plan stored beside the parse and the lockfile's
index (``service.state.status_index``), keyed on the lockfile's bytes. The loader keys each
entry on a hash of everything the parse read (``service.loading.stored``), serves an entry only
while the environment variables the parse looked up are still unset, and never stores a parse
that took an environment value, so the files hold only what the definition's own files and the
settings say.
"""

from __future__ import annotations

import logging

from django.core.cache import caches

logger = logging.getLogger("secretsapi.definition_store")

CACHE_ALIAS = "definitions"


class CachedDefinitions:
    """``service.loading.loader.DefinitionStore`` over the ``definitions`` cache.

    The store only saves work: an entry that cannot be read (a partly written file, a pickle of
    classes that changed, a folder that cannot be written) is a miss, and the definition is
    parsed as if there were no store, so every failure is caught and logged at debug level.
    """

    def get(self, key: str) -> object | None:
        try:
            found: object | None = caches[CACHE_ALIAS].get(key)
        except Exception:  # see the class docstring: a miss, whatever went wrong
            logger.debug("stored entry %s unreadable; parsing", key, exc_info=True)
            return None
        return found

    def has(self, key: str) -> bool:
        try:
            return bool(caches[CACHE_ALIAS].has_key(key))
        except Exception:  # see the class docstring
            return False

    def set(self, key: str, value: object) -> None:
        try:
            caches[CACHE_ALIAS].set(key, value)
        except Exception:  # see the class docstring
            logger.debug("entry %s not stored", key, exc_info=True)


STORE = CachedDefinitions()
