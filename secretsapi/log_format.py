"""Log lines as text or as one JSON object each (``SERVICE_LOG_FORMAT``), for the app and gunicorn alike.

Access lines are gunicorn's (project/gunicorn.conf.py): gunicorn hands its access logger the
request's fields (its "atoms") as the record's arguments, so the JSON formatter writes them as
fields. The API key's name reaches them through the WSGI environ (``KEY_NAME_ENVIRON``, set by
the authentication class); the key itself is never in the environ's logged fields, nor is the
query string (a key wrongly sent in a URL stays out of the log).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

# Set by secretsapi.api.authentication on an authenticated request; gunicorn logs it as %({...}e)s.
KEY_NAME_ENVIRON = "secretsapi.key_name"
ACCESS_FORMAT = f'%(h)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(L)ss key=%({{{KEY_NAME_ENVIRON}}}e)s'
# JSON field -> gunicorn atom (request method, path without query, status, seconds, bytes, client).
ACCESS_FIELDS = {"method": "m", "path": "U", "status": "s", "duration_s": "L", "bytes": "b", "client": "h",
                 "key": f"{{{KEY_NAME_ENVIRON}}}e"}


def _stamp(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TextFormatter(logging.Formatter):
    """``TIME LEVEL LOGGER MESSAGE``, the time in ISO 8601 UTC with milliseconds."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return _stamp(record.created)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message; an access line's request fields;
    ``exception`` with the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {"time": _stamp(record.created), "level": record.levelname,
                                "logger": record.name, "message": record.getMessage()}
        if record.name == "gunicorn.access" and isinstance(record.args, Mapping):
            atoms = record.args
            for field, atom in ACCESS_FIELDS.items():
                value = atoms.get(atom, "-")
                line[field] = None if value in ("-", None) else value
            line["status"] = _number(line["status"], int)
            line["duration_s"] = _number(line["duration_s"], float)
            line["bytes"] = _number(line["bytes"], int)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line)


def _number(value: Any, kind: type[int] | type[float]) -> Any:
    try:
        return kind(value)
    except (TypeError, ValueError):
        return value


def formatter(log_format: str) -> dict[str, str]:
    """A ``logging.config.dictConfig`` formatter for ``SERVICE_LOG_FORMAT`` (text or json)."""
    return {"()": f"secretsapi.log_format.{'JsonFormatter' if log_format == 'json' else 'TextFormatter'}"}


def gunicorn_logging(log_format: str, level: str) -> dict[str, Any]:
    """gunicorn's ``logconfig_dict``: its error and access lines on stdout, in the app's format.

    Not propagated: the app's root handler (Django's LOGGING) would print each line a second time.
    """
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"service": formatter(log_format)},
        "handlers": {"stdout": {"class": "logging.StreamHandler", "formatter": "service",
                                "stream": "ext://sys.stdout"}},
        "root": {"level": level, "handlers": ["stdout"]},
        "loggers": {
            "gunicorn.error": {"level": level, "handlers": ["stdout"], "propagate": False},
            "gunicorn.access": {"level": "INFO", "handlers": ["stdout"], "propagate": False},
        },
    }


def django_logging(log_format: str, level: str) -> dict[str, Any]:
    """Django's ``LOGGING``: every line on the console in ``log_format``, at ``level``."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": formatter(log_format)},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django": {"handlers": ["console"], "level": level, "propagate": False},
            # django-axes says three things at INFO for every failed admin login; its warnings
            # (a failure, a lockout) are the ones an operator reads.
            "axes": {"level": "WARNING" if level in ("DEBUG", "INFO") else level},
            # The Azure SDK logs every request's URL and headers (credentials redacted) and every token
            # it gets at INFO: noise for an operator; its warnings and errors still come through.
            "azure": {"level": "WARNING" if level in ("DEBUG", "INFO") else level},
            # The task engine says "Starting worker" and "No more tasks" at INFO each time a runner
            # takes a batch of jobs (jobs/engine.py): noise; its warnings and errors come through.
            "django_tasks_db": {"level": "WARNING" if level in ("DEBUG", "INFO") else level},
        },
    }
