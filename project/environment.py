"""How project/settings.py reads the environment: one reader per kind of value.

The settings module is the only one that names a SERVICE_* variable (tests/test_settings.py
greps); these readers take the name it passes. Empty or unset means the default; any other value
that is not understood stops the process at start with ImproperlyConfigured naming the variable,
rather than being read as something else. Only booleans, integers and choices quote the value
they refuse: strings may hold secrets.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from audit.forwarding import Sink

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})


def _given(name: str) -> str | None:
    """The variable with surrounding whitespace removed; None when unset or empty."""
    return os.environ.get(name, "").strip() or None


def env_str(name: str, default: str | None = None) -> str | None:
    """The value exactly as given (keys keep their whitespace), or ``default`` when unset or empty."""
    return os.environ.get(name) or default


def env_secret(name: str) -> str | None:
    """A setting that holds a secret: the variable ``NAME`` or, for Docker secrets and systemd
    credentials, the content of the file ``NAME_FILE`` names (one trailing newline removed).
    Both set, or a file that cannot be read or is empty, stops the process naming the variable
    and the path, never the content."""
    value = os.environ.get(name) or None
    path = _given(f"{name}_FILE")
    if path is None:
        return value
    if value is not None:
        raise ImproperlyConfigured(f"Set {name} or {name}_FILE, not both.")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ImproperlyConfigured(f"{name}_FILE: {path} is not UTF-8 text.") from None
    except OSError as exc:
        raise ImproperlyConfigured(f"{name}_FILE: cannot read {path} ({exc.strerror}).") from None
    text = text.removesuffix("\n").removesuffix("\r")
    if not text:
        raise ImproperlyConfigured(f"{name}_FILE: {path} is empty.")
    return text


def env_networks(name: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Comma-separated networks (``10.0.0.0/8``) or addresses (one host each)."""
    networks = []
    for item in env_list(name):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} must be comma-separated networks or addresses (10.0.0.0/8, 192.0.2.7, ::1), not {item!r}."
            ) from None
    return tuple(networks)


def env_list(name: str) -> list[str]:
    """A comma-separated list; blank items are dropped."""
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def env_paths(name: str) -> tuple[Path, ...]:
    """Absolute paths separated by ``:`` (as in PATH); blank items are dropped, relative ones are
    taken from the working folder at startup."""
    return tuple(Path(item.strip()).absolute() for item in os.environ.get(name, "").split(":") if item.strip())


def env_patterns(name: str) -> tuple[str, ...] | None:
    """Comma-separated variable names or ``*``/``?`` patterns; None when unset or empty, () for "-"."""
    return _env_items(name, r"[A-Za-z0-9_*?]+", "variable names or patterns (letters, digits, _, * and ?)")


def env_names(name: str) -> tuple[str, ...] | None:
    """Comma-separated names (letters, digits and ``._@:/-``); None when unset or empty, () for "-"."""
    return _env_items(name, r"[A-Za-z0-9_.@:/+=-]+", "names")


def _env_items(name: str, item_pattern: str, what: str) -> tuple[str, ...] | None:
    """Comma-separated items each matching ``item_pattern``; None when unset or empty, () for "-"."""
    value = _given(name)
    if value is None:
        return None
    if value == "-":
        return ()
    items = tuple(item.strip() for item in value.split(",") if item.strip())
    for number, item in enumerate(items, 1):
        if not re.fullmatch(item_pattern, item):
            raise ImproperlyConfigured(f"{name} must list {what} separated by commas, or be -: item {number} "
                                       "is not one.")
    return items


def env_bool(name: str, default: bool = False) -> bool:
    """true/false, 1/0 or yes/no in any case."""
    value = _given(name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true, false, 1, 0, yes or no (any case), not {value!r}.")


def env_true_only(name: str) -> bool:
    """A deliberate switch: only the word true enables it, only false (or nothing) disables it."""
    value = _given(name)
    if value is None or value.lower() == "false":
        return False
    if value.lower() == "true":
        return True
    raise ImproperlyConfigured(f"{name} must be true or false (only these two words, any case), not {value!r}.")


def env_int(name: str, default: int, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer, within ``minimum``..``maximum`` when given."""
    value = _given(name)
    if value is None:
        return default
    if minimum is not None and maximum is not None:
        expected = f"an integer from {minimum} to {maximum}"
    elif minimum is not None:
        expected = f"an integer of at least {minimum}"
    elif maximum is not None:
        expected = f"an integer of at most {maximum}"
    else:
        expected = "an integer"
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be {expected}, not {value!r}.") from None
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        raise ImproperlyConfigured(f"{name} must be {expected}, not {value!r}.")
    return number


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of ``choices`` in any case, returned in lower case."""
    value = _given(name)
    if value is None:
        return default
    if value.lower() not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)} (any case), not {value!r}.")
    return value.lower()


def env_cron(name: str, default: str) -> str | None:
    """A cron expression (five fields, or @hourly, @daily...), or ``off`` (None): disabled."""
    value = _given(name)
    if value is None:
        return default
    if value.lower() == "off":
        return None
    # Only for a value given: every process reads these settings, and croniter is of use to the job
    # workers alone (jobs/schedules.py).
    from croniter import croniter

    if not croniter.is_valid(value):
        raise ImproperlyConfigured(
            f"{name} must be a cron expression (such as '0 * * * *' or '@daily') or off, not {value!r}."
        )
    return value


_ADDRESS = re.compile(r"https?://(\*\.)?[A-Za-z0-9.\-\[\]:]+(:\d{1,5})?/?")


def is_address(value: str) -> bool:
    """An address a server credential may go to: ``https://host[:port]`` (``http://``: plain HTTP)."""
    return bool(_ADDRESS.fullmatch(value))


def env_pairs(name: str, value_ok: Callable[[str], bool]) -> dict[str, tuple[str, ...]]:
    """``key=value`` entries separated by commas or whitespace, grouped by key."""
    pairs: dict[str, tuple[str, ...]] = {}
    for item in re.split(r"[,\s]+", os.environ.get(name, "").strip()):
        key, sep, value = item.partition("=")
        if not item:
            continue
        if not sep or not key or not value_ok(value):
            raise ImproperlyConfigured(f"{name} must list <name>=<value> entries (see docs/configuration.md); "
                                       "one entry is not one")
        pairs[key] = (*pairs.get(key, ()), value)
    return pairs


def env_locations(name: str) -> dict[str, tuple[str, ...]] | None:
    """``env_pairs`` of target types and location prefixes; None when unset or empty, {} for "-"."""
    given = _given(name)
    return None if given is None else {} if given == "-" else env_pairs(name, bool)


def env_connections(name: str) -> dict[str, str]:
    """A mapping of names to admin connection URLs, as JSON or TOML text in ``NAME`` or in the file
    ``NAME_FILE`` names (``env_secret``: the URLs hold the admin credentials). Refused naming the
    setting and the entry's name, never a URL."""
    text = env_secret(name)
    if text is None:
        return {}
    try:
        parsed = json.loads(text) if text.lstrip().startswith("{") else tomllib.loads(text)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a JSON object or a TOML table of <name> = <url>.") from None
    found: dict[str, str] = {}
    for key, url in parsed.items():
        scheme = url.partition("://")[0].partition("+")[0].lower() if isinstance(url, str) else ""
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", key) or scheme not in _CONNECTION_SCHEMES:
            raise ImproperlyConfigured(f"{name}: connection {key[:64]!r} must be a URL of one of "
                                       f"{', '.join(_CONNECTION_SCHEMES)} (see docs/credentials.md).")
        found[key] = url
    return found


_CONNECTION_SCHEMES = ("postgres", "postgresql", "mysql", "mariadb", "aws")


def audit_sink(value: str | None) -> Sink | None:
    """Where SERVICE_AUDIT_FORWARD sends every new audit row (audit/forwarding.py); None: off."""
    if value is None or not value.strip():
        return None
    url = urlsplit(value.strip())
    expected = ("must be syslog+udp://host:port, syslog+tcp://host:port or file:///absolute/path, "
                f"not {value.strip()!r}.")
    if url.scheme in ("syslog+udp", "syslog+tcp"):
        try:
            port = url.port
        except ValueError:
            port = None
        if not url.hostname or port is None or url.path not in ("", "/") or url.query:
            raise ImproperlyConfigured(f"SERVICE_AUDIT_FORWARD {expected}")
        return Sink("syslog", transport=url.scheme.removeprefix("syslog+"), host=url.hostname, port=port)
    if url.scheme == "file" and url.netloc in ("", "localhost") and url.path.startswith("/") and not url.query:
        return Sink("file", path=unquote(url.path))
    raise ImproperlyConfigured(f"SERVICE_AUDIT_FORWARD {expected}")
