"""gunicorn settings for ``manage.py serve``: values from the Django settings, which read the
environment (``serve``'s --host, --port, --workers and --log-level reach gunicorn as its own
command-line options, which win over this file)."""

import json
import os
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from gunicorn import util

# The first setting read imports the settings module; no django.setup(): the app loads in the workers.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

bind = f"{settings.SERVICE_HOST}:{settings.SERVICE_PORT}"
workers = settings.SERVICE_WORKERS
threads = settings.SERVICE_THREADS
worker_class = "project.gunicorn_worker.BalancedThreadWorker"
loglevel = settings.SERVICE_LOG_LEVEL.lower()
accesslog = "-"
errorlog = "-"
# Query strings are not logged: a key wrongly sent in the URL must not reach the log.
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(L)ss'
timeout = settings.SERVICE_TIMEOUT
graceful_timeout = 30
wsgi_app = "project.wsgi:application"
# Several instances may run on one machine: a shared default control socket would collide.
control_socket_disable = True
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")


# --- One error body, even for requests gunicorn refuses before Django sees them ---------------
# Malformed HTTP, a request line over 4094 bytes, oversized headers: gunicorn answers these
# itself with an HTML page. The service promises {"error", "detail", "timestamp"} for every
# error, so its writer is replaced (before workers fork). Details are fixed sentences: the
# request line gunicorn would quote may carry a key a client wrongly put in the URL.
_ERRORS = {
    400: ("Bad request", "The request is not valid HTTP."),
    403: ("Forbidden", "The request is not allowed."),
    414: ("URI too long", "The request line is longer than the server accepts (4094 bytes)."),
    408: ("Request timeout", "The request did not arrive in full within SERVICE_REQUEST_READ_TIMEOUT seconds."),
    417: ("Expectation failed", "The server cannot meet the Expect header."),
    431: ("Request header fields too large", "The request headers are larger than the server accepts."),
    500: ("Internal server error", "An unexpected error occurred; the server log has the details."),
    501: ("Not implemented", "The request uses a transfer coding the server does not support."),
    503: ("Service unavailable", "The server holds too many partly received requests; try again shortly."),
}


def _write_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn.util.write_error's signature; ``mesg`` (quoting the request) is left out."""
    title, detail = _ERRORS.get(status_int, (reason, f"{reason}."))
    body = json.dumps({"error": title, "detail": detail, "timestamp": datetime.now(UTC).isoformat()}).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
    util.write_nonblock(sock, head + body)


util.write_error = _write_error


# --- A worker's start: garbage collection ----------------------------------------------------------------------
def post_worker_init(worker: Any) -> None:
    """Short garbage-collection pauses beside the caches (see project/gc_policy.py)."""
    from project import gc_policy

    gc_policy.start()
