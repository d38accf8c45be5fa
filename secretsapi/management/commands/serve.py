"""``manage.py serve``: apply migrations (one instance at a time), then run the API under gunicorn.

Long operations need a job worker (``manage.py worker``). ``--worker auto`` (the default, and
SERVICE_SERVE_WORKER) starts one beside gunicorn when none has sent a heartbeat lately; ``yes``
always starts one, ``no`` never does, and ``wait`` starts none but serves only once one runs (or
after WORKER_START_SECONDS): for a worker started beside serve (``make serve``, a supervisor's
pair). Either way serve says at start which it is: with no worker, long operations answer 503
``no_worker`` at once, never a silent wait. The worker it starts is a child of this process and
stops when it ends.

gunicorn's master runs in this process (its documented custom-application API) with the app
loaded before the web workers fork (``preload_app``): a worker starts from what this process has
imported already instead of importing Django and the app again (about 1 CPU-s a start).
"""

from __future__ import annotations

import logging
import logging.config
import os
import sys
import time
import traceback
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import execute_from_command_line
from django.core.management.base import BaseCommand, CommandError, OutputWrapper
from django.db import DatabaseError, connections
from gunicorn.app.wsgiapp import WSGIApplication

from apikeys.keys import insecure_mode
from deployment.key_fingerprint import SecretKeyMismatch, verify_secret_key
from jobs import workers
from secretsapi import log_format
from secretsapi.api.loopback import HOW_TO_LEAVE, is_loopback_address
from secretsapi.management.base import as_failure, migrate_pending, say
from secretsapi.service.errors import LockTimeout

logger = logging.getLogger("secretsapi.serve")

# How long serve waits for the worker it started to register before it serves anyway.
WORKER_START_SECONDS = 30
NO_WORKER_WARNING = (
    "WARNING: no job worker is running and serve was told not to start one (--worker no or wait): long operations "
    "(sync, rotation, checks of large definitions, async jobs) answer 503 no_worker until `python manage.py "
    "worker` runs.\n")
CONF = Path(settings.BASE_DIR) / "project" / "gunicorn.conf.py"

INSECURE_WARNING = """
************************************************************************
*  WARNING: SERVICE_API_KEY is not set and no API key was created:     *
*  the API runs in INSECURE MODE: every request from this machine is   *
*  accepted without a key (loopback only; pages of other origins may   *
*  not change anything). Use this only on your own machine. Generate   *
*  a key with `python manage.py generate_api_key` or                   *
*  `manage.py apikey create`.                                          *
************************************************************************
"""


class Command(BaseCommand):
    help = "Apply pending migrations, then serve the API with gunicorn."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--port", type=int, help="Port (default: SERVICE_PORT, else 8000).")
        parser.add_argument("--host", default=settings.SERVICE_HOST)
        parser.add_argument("--socket", type=Path, default=settings.SERVICE_SOCKET,
                            help="Listen on this Unix socket instead of --host and --port (default: SERVICE_SOCKET).")
        parser.add_argument("--workers", type=int, default=settings.SERVICE_WORKERS)
        parser.add_argument(
            "--worker", choices=["auto", "yes", "no", "wait"], default=settings.SERVICE_SERVE_WORKER,
            help="Start a job worker beside the API: auto (when none is running), yes, no, or wait (start none; "
                 "serve once one runs, or after 30 s) (default: SERVICE_SERVE_WORKER, else auto).")
        parser.add_argument(
            "--log-level",
            choices=["debug", "info", "warning", "error"],
            default=settings.SERVICE_LOG_LEVEL.lower(),
        )

    @staticmethod
    def _say(level: int, text: str, stream: OutputWrapper) -> None:
        """Under SERVICE_LOG_FORMAT=json a log record (one JSON line, like every other); else as written."""
        say(logger, level, text, stream)

    def _job_worker(self, choice: str) -> None:
        """Start the embedded job worker, or say why there is none (see the module docstring)."""
        alive = workers.alive()
        if choice == "wait" and not alive:
            # Started beside a worker (make serve, a supervisor's pair): serve once it has registered.
            self._say(logging.INFO, f"Waiting up to {WORKER_START_SECONDS} s for a job worker...", self.stdout)
            deadline = time.monotonic() + WORKER_START_SECONDS
            while not alive and time.monotonic() < deadline:
                time.sleep(0.2)
                alive = workers.alive()
        if choice in ("no", "wait") or (choice == "auto" and alive):
            if alive:
                self._say(logging.INFO, "Job worker: one is running (heartbeat seen); long operations run there.",
                          self.stdout)
            else:
                self._say(logging.WARNING, NO_WORKER_WARNING, self.stderr)
            return
        connections.close_all()
        child = _fork_worker()
        # Served once the worker has registered: the first request finds it (its heartbeat).
        deadline = time.monotonic() + WORKER_START_SECONDS
        while not workers.alive() and not _exited(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        connections.close_all()
        if _exited(child):
            raise CommandError("The job worker serve started has exited (see its output above).")
        self._say(logging.INFO, "Job worker: started with the server (long operations and schedules run there).",
                  self.stdout)

    def handle(self, *args: Any, **options: Any) -> None:
        _log_level(options["log_level"])
        port = options["port"] or settings.SERVICE_PORT
        if not 0 < port < 65536:
            raise CommandError(f"--port must be between 1 and 65535, not {port}")
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        socket = options["socket"].absolute() if options["socket"] else None
        if settings.SERVICE_BEHIND_PROXY and socket is None and not is_loopback_address(options["host"]):
            # The forwarded headers are believed from whoever connects: only the proxy may.
            raise CommandError(
                f"Refusing to listen on {options['host']} with SERVICE_BEHIND_PROXY=true: the X-Forwarded-* "
                "headers would be trusted from any client, so serve listens on loopback only (127.0.0.1, ::1 "
                "or localhost), behind the proxy on the same host."
            )
        # Several instances may start at once against one database: exactly one migrates
        # (under the lock), the others then find nothing to do.
        try:
            migrate_pending()
            # Every instance and worker on this database signs with one key (deployment/key_fingerprint.py).
            verify_secret_key()
        except SecretKeyMismatch as exc:
            raise CommandError(str(exc)) from None
        except (LockTimeout, DatabaseError) as exc:
            # One line, never a traceback (the engine commands' rule): a lock held too long, or a
            # database that cannot be reached or migrated.
            raise CommandError(as_failure(exc).detail) from None
        # One cheap query at start, after migrating: the key table must exist to be asked.
        # Requests check again (a key may be created while serving).
        if insecure_mode():
            if socket is None and not is_loopback_address(options["host"]):
                # Every request is accepted without a key: only this machine may reach it.
                raise CommandError(
                    f"Refusing to listen on {options['host']} in insecure mode (no API key): it accepts every "
                    f"request, so it listens on loopback only (127.0.0.1, ::1 or localhost); {HOW_TO_LEAVE}."
                )
            self._say(logging.WARNING, INSECURE_WARNING, self.stderr)
        self._job_worker(options["worker"])
        # gunicorn's own options win over its config file (whose values come from settings).
        # A socket's folder decides who reaches it (gunicorn makes the socket itself 0777).
        bind = f"unix:{socket}" if socket else f"{options['host']}:{port}"
        overrides = ["--bind", bind, "--workers", str(options["workers"]), "--log-level", options["log_level"]]
        where = bind if socket else f"http://{bind}"
        self._say(logging.INFO, f"Serving on {where} ({options['workers']} workers)", self.stdout)
        sys.stdout.flush()
        # The web workers fork from this process: no connection of its may be shared with them.
        connections.close_all()
        # gunicorn's master takes over this process (this PID: SIGTERM reaches it and it stops
        # gracefully) and reads its options as from its own command line; it exits with its status.
        sys.argv = ["gunicorn", "--config", str(CONF), *overrides, "project.wsgi:application"]
        _Gunicorn().run()


def _fork_worker() -> int:
    """``manage.py worker --stop-with-parent`` in a child of this process (which becomes gunicorn's
    master: the worker stops when it ends). Forked, not started anew: it begins from what serve has
    imported (about 1 CPU-s less). This process has no thread and no open connection to share."""
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child:
        return child
    code = 1
    try:
        execute_from_command_line(["manage.py", "worker", "--stop-with-parent"])
        code = 0
    except SystemExit as exc:
        # As the interpreter would end: a message is printed and means 1, nothing means 0.
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException:  # the child ends here whatever happened: it never returns into serve
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _exited(child: int) -> bool:
    try:
        return os.waitpid(child, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


class _Gunicorn(WSGIApplication):
    """gunicorn's own WSGI application, closing the database connections the app's import opened
    in the master (its warm-up) before the workers fork from it."""

    def __init__(self) -> None:
        super().__init__("manage.py serve")

    def load_wsgiapp(self) -> Any:
        app = super().load_wsgiapp()
        connections.close_all()
        return app


def _log_level(level: str) -> None:
    """``--log-level`` wins over SERVICE_LOG_LEVEL in this process's logging and in the processes it
    forks: Django's (which the app's start applies again) and gunicorn's (whose config file reads
    the setting)."""
    if level.upper() == settings.SERVICE_LOG_LEVEL:
        return
    settings.SERVICE_LOG_LEVEL = level.upper()
    settings.LOGGING = log_format.django_logging(settings.SERVICE_LOG_FORMAT, settings.SERVICE_LOG_LEVEL)
    logging.config.dictConfig(settings.LOGGING)
