"""``secretsctl``'s entry point: the program, then the database connection closed, and a reader
that went away answered as a pipeline expects."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import Any

from secretsapi.cli.app import cli
from secretsapi.cli.program import BROKEN_PIPE, PROG, ReaderGone


def main(prog_name: str = PROG) -> None:
    """The console script's entry point: the program, then the database connection closed.

    A reader that stops reading (``| head``) ends the program quietly with 141, the code of a
    process SIGPIPE ended, as ``cat`` or ``grep`` end in a pipeline: no traceback, no "Exception
    ignored" when the interpreter flushes its output at exit."""
    # The process ends with the command: what start-up loaded (Django, the apps, this code)
    # lives until then, so the collector's full passes need not walk it again.
    gc.freeze()
    code: Any = 0
    try:
        cli.main(prog_name=prog_name)
    except SystemExit as exc:
        code = exc.code
    except ReaderGone:
        code = BROKEN_PIPE
    finally:
        if "django.db" in sys.modules:
            _close_connections()
    try:
        sys.stdout.flush()  # here, where a closed pipe can be answered, not in the interpreter's exit
    except BrokenPipeError:
        code = BROKEN_PIPE
    if code == BROKEN_PIPE:
        # Whatever is left in stdout's buffer is flushed at exit: into /dev/null, not the closed pipe.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(code)


def _close_connections() -> None:
    from django.core.exceptions import ImproperlyConfigured
    from django.db import DatabaseError, connections

    with contextlib.suppress(ImproperlyConfigured, DatabaseError):
        connections.close_all()
