"""HTTP to the service (requests): the key in ``X-API-Key``, TLS verified (``--ca-bundle`` names
another CA bundle), the spec's error body read into ``ServerError``, and a long operation's job
followed at ``GET /jobs/{id}`` with its progress drawn as the local mode draws the engine's."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import click
import requests
from rich.console import Console

from secretsapi import __version__
from secretsapi.cli.progress import reporting
from secretsapi.cli.remote.address import Remote

# Connect, then read: a synchronous POST waits up to the server's SERVICE_JOB_WAIT_SECONDS (30 s
# by default) before it answers 202, so the read bound is well above it.
TIMEOUTS = (10.0, 120.0)
# Requests at once for one read per secret (status): the server's gunicorn has 2 workers of 4
# threads by default; more would only queue there.
CONNECTIONS = 4
# How long a followed job may run before secretsctl stops waiting (it keeps running on the server).
JOB_TIMEOUT_ENV = "SECRETSCTL_JOB_TIMEOUT"
JOB_TIMEOUT_S = 3600.0
FIRST_POLL_S, LAST_POLL_S = 0.05, 1.0
clock = time.monotonic
sleep = time.sleep


class ServerError(Exception):
    """The service answered an error: its status and the spec's body (``error``, ``detail``)."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail = status, error, detail


class Unreachable(Exception):
    """No answer: refused, timed out, a TLS failure, or not the service at that address."""


class Client:
    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.session = self._new_session()
        # Sessions of the threads of ``get_each`` (a requests Session is not meant to be shared).
        self._local = threading.local()
        self._sessions: list[requests.Session] = [self.session]
        self._sessions_lock = threading.Lock()
        # True: certifi's bundle (or REQUESTS_CA_BUNDLE's); never False. Given with each request:
        # requests lets REQUESTS_CA_BUNDLE override a session's own setting, not a request's.
        self.verify: str | bool = remote.ca_bundle or True

    def _new_session(self) -> requests.Session:
        session = requests.Session()
        session.headers["User-Agent"] = f"secretsctl/{__version__}"
        session.headers["Accept"] = "application/json"
        if self.remote.key:
            session.headers["X-API-Key"] = self.remote.key
        return session

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self._answer(self._send("GET", path, params=params))

    def get_each(self, paths: Sequence[str], params: Mapping[str, Any] | None, *,
                 advance: Callable[[], None]) -> list[Any]:
        """``GET`` of each path, answers in order, ``CONNECTIONS`` at a time (each its own
        kept-alive connection); ``advance`` after each answer. The first error stops the rest."""
        def one(path: str) -> Any:
            return self._answer(self._send("GET", path, params=params, session=self._thread_session()))

        answers = []
        pool = ThreadPoolExecutor(max_workers=CONNECTIONS, thread_name_prefix="secretsctl")
        try:
            for answer in pool.map(one, paths):
                answers.append(answer)
                advance()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return answers

    def _thread_session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = self._new_session()
            with self._sessions_lock:
                self._sessions.append(session)
        return session

    def operation(self, path: str, body: Mapping[str, Any], *, label: str, quiet: bool) -> Any:
        """A long operation's result: its POST, then, if it answered 202, its job until it ends.

        Where a progress bar can show (a terminal, no ``--quiet``) the POST asks for the job at
        once (``async``), so the bar follows the job's progress from the start."""
        follow = not quiet and Console(stderr=True).is_terminal
        response = self._send("POST", path, json={**body, "async": True} if follow else dict(body))
        if response.status_code != 202:
            return self._answer(response)
        job = self._json(response)
        with reporting(label, quiet=quiet) as report:
            return self._follow(str(job["id"]), report)

    def _follow(self, job_id: str, report: Callable[[int, int], None]) -> Any:
        deadline = clock() + _job_timeout()
        for delay in _delays():
            job = self.get(f"/jobs/{job_id}")
            progress = job.get("progress") or {}
            if progress.get("total"):
                report(int(progress.get("done") or 0), int(progress["total"]))
            if job.get("status") is not None:
                result = job.get("result") or {}
                if int(job["status"]) >= 400:
                    raise _server_error(int(job["status"]), result)
                return result
            if clock() + delay > deadline:
                break
            sleep(delay)
        raise Unreachable(f"job {job_id} is still running after {JOB_TIMEOUT_ENV}="
                          f"{os.environ.get(JOB_TIMEOUT_ENV) or int(JOB_TIMEOUT_S)} s; it goes on on the "
                          f"server: GET {self.remote.url('/jobs/' + job_id)}")

    def _send(self, method: str, path: str, *, session: requests.Session | None = None,
              **kwargs: Any) -> requests.Response:
        url = self.remote.url(path)
        try:
            return (session or self.session).request(method, url, timeout=TIMEOUTS, allow_redirects=False,
                                                     verify=self.verify, **kwargs)
        except requests.exceptions.SSLError as exc:
            raise Unreachable(f"TLS verification failed for {self.remote.addr} ({_reason(exc)}); name the "
                              "server's CA with --ca-bundle or SECRETSCTL_CA_BUNDLE") from None
        except requests.exceptions.Timeout:
            raise Unreachable(f"{self.remote.addr} did not answer in time ({method} {path})") from None
        except requests.exceptions.ConnectionError as exc:
            raise Unreachable(f"cannot connect to {self.remote.addr} ({_reason(exc)})") from None
        except (OSError, requests.exceptions.RequestException) as exc:  # an unreadable --ca-bundle
            raise Unreachable(f"cannot reach {self.remote.addr}: {_reason(exc)}") from None

    def _answer(self, response: requests.Response) -> Any:
        if response.status_code >= 400:
            raise _server_error(response.status_code, _body(response))
        if 300 <= response.status_code < 400:
            raise Unreachable(f"{self.remote.addr} redirected {response.request.method} to "
                              f"{response.headers.get('Location', '?')}: give that address to --addr")
        return self._json(response)

    def _json(self, response: requests.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            raise Unreachable(f"{self.remote.addr} answered {response.status_code} without JSON: is it "
                              "this service?") from None


def _body(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return {}


def _server_error(status: int, body: Any) -> ServerError:
    body = body if isinstance(body, dict) else {}
    error = str(body.get("error") or f"HTTP {status}")
    detail = str(body.get("detail") or "the server gave no detail")
    return ServerError(status, error, detail)


def _reason(exc: BaseException) -> str:
    """The exception's text on one line, bounded (requests nests urllib3's reasons in it)."""
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__


def _job_timeout() -> float:
    given = os.environ.get(JOB_TIMEOUT_ENV) or ""
    try:
        return float(given) if given else JOB_TIMEOUT_S
    except ValueError:
        raise click.UsageError(f"{JOB_TIMEOUT_ENV} must be a number of seconds, not {given!r}") from None


def _delays() -> Iterator[float]:
    delay = FIRST_POLL_S
    while True:
        yield delay
        delay = min(delay * 1.5, LAST_POLL_S)


@contextmanager
def connected(remote: Remote) -> Iterator[Client]:
    client = Client(remote)
    try:
        yield client
    finally:
        for session in client._sessions:
            session.close()
