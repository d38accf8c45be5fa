"""A source credential's turn: choose the slot not in use, issue a new secret there, verify it
by logging in, and (after the write commits) make it current; retire the previous slot once
its grace period is over.

A slot is a database user (``users: [a, b]`` take turns; ``user: a`` is single-phase) or an IAM
access key of ``user``. The phase state is kept in the lockfile entry's ``credential`` field:
slot names, times and the phase reached, never a value. What a phase leaves if the process dies
there (the lockfile is committed only after every target holds the new value):

- ``issue``/``verify``: the new password is on the standby user only, which no consumer uses;
  the next run issues it again (undone).
- ``targets``: some targets hold the standby's new credential, which works, the others the
  current one, which still works; the next run issues the standby again and writes every target.
- ``retire``: the previous slot is retired again by the next tick (retiring is idempotent).
"""

from __future__ import annotations

import json
import logging
import secrets
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from secretsapi.service.credentials.spec import CredentialSpec, check_connection, without_driver
from secretsapi.service.errors import GeneratorError

logger = logging.getLogger(__name__)
STATE_KEY = "credential"  # the lockfile entry's field
_ALPHABET = string.ascii_letters + string.digits


PHASE_PREFIX = "source credential: phase "


def phase_failed(phase: str, reason: str) -> GeneratorError:
    """A phase of a credential's rotation failed: the message names the phase (the result's
    error, its audit row and its job say it)."""
    return GeneratorError(f"{PHASE_PREFIX}'{phase}' failed: {reason}")


def is_phase_failure(exc: GeneratorError) -> bool:
    return exc.message.startswith(PHASE_PREFIX)


class Source(Protocol):
    """Where a credential lives: the operator's admin connection to it."""

    def issue(self, slot: str | None, user: str, length: int, keep: str | None = None) -> tuple[str, str]:
        """A new secret on ``slot`` (None: the source picks, an IAM key), ``keep`` left as it is
        (the current one): (value, slot)."""
        ...

    def verify(self, value: str, *, fresh: bool = False) -> bool:
        """Whether ``value`` logs in; ``fresh``: it was just issued (IAM: retried while it propagates)."""
        ...

    def retire(self, user: str, slot: str) -> None: ...


@dataclass(frozen=True)
class Issued:
    value: str = field(repr=False)
    state: dict[str, Any]  # the entry's ``credential`` field once the write commits


def phase(name: str, secret: str, slot: str | None) -> None:
    """One log line per phase reached (operators follow a rotation; the crash tests stop there)."""
    logger.info("credential %s: phase %s (%s)", secret, name, slot or "new key")


def new_password(length: int) -> str:
    # Letters and digits: every client library, URL and dotenv reader takes them unquoted.
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def db_value(user: str, password: str) -> str:
    """The value written to targets: the user in use and its password, as compact JSON with
    sorted keys (SecretZero's shape for a mapping value; AWS Secrets Manager's for database users)."""
    return json.dumps({"password": password, "username": user}, separators=(",", ":"), sort_keys=True)


def state_of(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    found = (extra or {}).get(STATE_KEY)
    return dict(found) if isinstance(found, Mapping) else {}


def standby(spec: CredentialSpec, state: Mapping[str, Any], now: datetime, *, cut_grace: bool = False) -> str | None:
    """The slot to issue on: the user not in use (single-phase: the one user; IAM: None, a new
    key). A phase failure while that user is still in its grace period: consumers may hold it."""
    current, until = state.get("current"), state.get("retire_after")
    if cut_grace and isinstance(until, str) and _after(until, now):
        logger.warning("credential rotation forced: the grace period of '%s' is cut short", state.get("previous"))
        until = None
    if spec.kind == "aws_iam_key":
        if state.get("previous") and isinstance(until, str) and _after(until, now):
            raise phase_failed("choose", f"key '{state['previous']}' is in its grace period until {until}; "
                                        "rotate after it (or shorten grace_period)")
        return None
    if not spec.dual:
        return spec.users[0]
    choice = spec.users[1] if current == spec.users[0] else spec.users[0]
    if state.get("previous") == choice and isinstance(until, str) and _after(until, now):
        raise phase_failed("choose", f"user '{choice}' is in its grace period until {until}; "
                                    "rotate after it (or shorten grace_period)")
    return choice


def slot_of(spec: CredentialSpec, value: str) -> str | None:
    """The user (or access key id) a credential value names."""
    try:
        parsed = json.loads(value)
        found = parsed["access_key_id" if spec.kind == "aws_iam_key" else "username"]
    except (ValueError, KeyError, TypeError):
        return None
    return found if isinstance(found, str) else None


def issue(spec: CredentialSpec, secret: str, state: Mapping[str, Any], connections: Mapping[str, str],
          now: datetime, unrecorded: Sequence[str] = (), recorded: Sequence[str] = (), *,
          cut_grace: bool = False) -> Issued:
    """Issue and verify a new credential on the standby slot; nothing is written or recorded yet.

    ``unrecorded``: values targets hold that the lockfile did not record. One of the standby
    slot (a run that died after writing some or all targets, before its commit) that logs in
    is adopted instead of issuing another: the run finishes the interrupted one, and those
    targets never hold a dead credential. ``recorded``: copies of the recorded value; when the
    standby is in its grace period and they no longer log in (changed at the source by hand),
    the current slot is issued again in place: nobody can be using it."""
    problem = check_connection(spec, connections)
    if problem is not None:
        raise phase_failed("connect", problem)
    source = source_for(spec, connections[spec.connection])
    current, previous = state.get("current"), state.get("previous")
    keep = current if isinstance(current, str) else None
    try:
        slot, again = standby(spec, state, now, cut_grace=cut_grace), False
    except GeneratorError:
        if not isinstance(current, str) or not recorded or any(
                _works(source, v, "choose") for v in dict.fromkeys(recorded)):
            raise
        slot, again = (None if spec.kind == "aws_iam_key" else current), True
        keep = previous if isinstance(previous, str) else None
    adopted = None if again else _adoptable(spec, source, slot, current, unrecorded)
    if adopted is not None:
        value, slot = adopted
        phase("adopt", secret, slot)
    else:
        phase("reissue" if again else "issue", secret, slot)
        try:
            value, slot = source.issue(slot, spec.users[0], spec.length, keep)
        except GeneratorError as exc:
            if is_phase_failure(exc):
                raise
            raise phase_failed("issue", exc.message) from None
        phase("verify", secret, slot)
        try:
            works = source.verify(value, fresh=True)
        except GeneratorError as exc:
            raise phase_failed("verify", f"{exc.message}; no target was written") from None
        if not works:
            raise phase_failed("verify", f"'{slot}' could not log in with its new credential; no target was written")
    phase("targets", secret, slot)
    return Issued(value, _committed(spec, state, slot, now, keep_previous=again))


def _committed(spec: CredentialSpec, state: Mapping[str, Any], slot: str, now: datetime, *,
               keep_previous: bool) -> dict[str, Any]:
    """The ``credential`` state once ``slot`` is current: the one it replaces is the previous,
    valid for the grace period (a slot issued again in place keeps the previous it had)."""
    committed: dict[str, Any] = {"kind": spec.kind, "connection": spec.connection, "current": slot,
                                 "phase": "current", "since": format_time(now)}
    if keep_previous:
        committed.update({k: state[k] for k in ("previous", "retire_after") if k in state})
    elif spec.dual and state.get("current") and state.get("current") != slot:
        committed.update(previous=state["current"], retire_after=format_time(now + spec.grace))
    retired = state.get("retired")
    if isinstance(retired, str) and retired != slot:
        committed["retired"] = retired
    return committed


def _works(source: Source, value: str, during: str) -> bool:
    try:
        return source.verify(value)
    except GeneratorError as exc:
        if is_phase_failure(exc):
            raise
        raise phase_failed(during, exc.message) from None


def _adoptable(spec: CredentialSpec, source: Source, slot: str | None, current: object,
               unrecorded: Sequence[str]) -> tuple[str, str] | None:
    for value in dict.fromkeys(unrecorded):
        named = slot_of(spec, value)
        fits = named is not None and named != current and (slot is None or named == slot)
        if fits and named is not None and _works(source, value, "adopt"):
            return value, named
    return None


def retire(spec: CredentialSpec, secret: str, state: Mapping[str, Any], connections: Mapping[str, str],
           now: datetime) -> dict[str, Any] | None:
    """The state after retiring the previous slot, when its grace is over (None: nothing to do)."""
    previous, until = state.get("previous"), state.get("retire_after")
    if not isinstance(previous, str) or not isinstance(until, str) or _after(until, now):
        return None
    problem = check_connection(spec, connections)
    if problem is not None:
        raise phase_failed("retire", problem)
    phase("retire", secret, previous)
    try:
        source_for(spec, connections[spec.connection]).retire(spec.users[0], previous)
    except GeneratorError as exc:
        if is_phase_failure(exc):
            raise
        raise phase_failed("retire", exc.message) from None
    done = {k: v for k, v in state.items() if k not in ("previous", "retire_after")}
    done.update(retired=previous, retired_at=format_time(now))
    return done


def verify_value(spec: CredentialSpec, value: str, connections: Mapping[str, str]) -> bool | None:
    """Whether ``value`` logs in now (None: the connection is not configured)."""
    if check_connection(spec, connections) is not None:
        return None
    return source_for(spec, connections[spec.connection]).verify(value)


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()  # the lockfile's format (``state.lockfile``)


def parse_time(text: str) -> datetime:
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _after(until: str, now: datetime) -> bool:
    try:
        return parse_time(until) > now
    except ValueError:
        return False  # an unreadable time (hand-edited): the grace is over


def source_for(spec: CredentialSpec, url: str) -> Source:
    if spec.kind == "aws_iam_key":
        from secretsapi.service.credentials.iam import IamSource

        return IamSource(url)
    from secretsapi.service.credentials.databases import MySQL, Postgres

    plain = without_driver(url)
    return DatabaseSource(Postgres(plain) if spec.kind == "postgres_user" else MySQL(plain))


class _Database(Protocol):
    def set_password(self, user: str, password: str) -> None: ...

    def verify(self, user: str, password: str) -> bool: ...


class DatabaseSource:
    def __init__(self, db: _Database) -> None:
        self._db = db

    def issue(self, slot: str | None, user: str, length: int, keep: str | None = None) -> tuple[str, str]:
        name = slot or user
        password = new_password(length)
        try:
            self._db.set_password(name, password)
        except GeneratorError as exc:
            raise phase_failed("issue", exc.message) from None
        return db_value(name, password), name

    def verify(self, value: str, *, fresh: bool = False) -> bool:
        try:
            parsed = json.loads(value)
            user, password = parsed["username"], parsed["password"]
        except (ValueError, KeyError, TypeError):
            return False
        if not isinstance(user, str) or not isinstance(password, str):
            return False
        return self._db.verify(user, password)

    def retire(self, user: str, slot: str) -> None:
        """A long random password nobody holds: the role stays (its grants, its objects)."""
        try:
            self._db.set_password(slot, new_password(64))
        except GeneratorError as exc:
            raise phase_failed("retire", exc.message) from None
