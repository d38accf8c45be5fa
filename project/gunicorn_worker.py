"""gunicorn's gthread worker, giving a thread only to a request that has fully arrived, and
accepting connections only while it has a free thread.

Slow clients. gthread parses each connection in a pool thread: a client sending its head a
byte a second held that thread, and 8 such clients held every thread of two workers (/health
answered nothing for 40 s). Here the worker's event loop reads every new and kept-alive
connection without blocking into a buffer (project/request_reader.py) until the head and the
body (by Content-Length, at most SERVICE_MAX_BODY_BYTES) are there, then hands the request to a
thread, whose parser reads from that buffer only: a thread never reads the client's socket.
A request not complete SERVICE_REQUEST_READ_TIMEOUT seconds after the connection opened (on a
kept-alive connection: after its first byte) is answered 408 and closed; a new connection that
sent nothing is closed silently (an idle kept-alive one after gunicorn's keepalive seconds).
Closing after an answer (waiting for the client's FIN so the answer is not cut by a reset) is
also done by the event loop, not by blocking it for up to 2 s per connection.

Balance. Every worker polls the same listening socket and the first to wake takes the
connection. A client that opens several keep-alive connections at once (a dashboard, a load
balancer's pool, a CI job's parallel calls) often had them all taken by one worker: measured
with 8 connections on 2 workers, about one run in three had every connection on one worker,
which then served them on one core while the other sat idle. A worker whose threads are all
busy now leaves new connections in the kernel's queue for a worker that can start them at once.
Connections being read take no thread, so they do not count, except a new one until its first
bytes arrive (FRESH_S at most): otherwise one worker could take a whole burst of connections
before any of their requests arrived. gunicorn's worker_connections bounds how many a worker
holds in all (being read, served, kept alive, closing).

Idle moments. When no request has been handed over or finished for a while, the event loop
lets the garbage-collection policy do its full pass (project/gc_policy.py), where no request
waits for it.
"""

from __future__ import annotations

import contextlib
import errno
import selectors
import socket
import time
from functools import partial
from typing import Any

from django.conf import settings
from gunicorn import http, util
from gunicorn.workers.gthread import TConn, ThreadWorker

from project import gc_policy
from project.request_reader import Framing, Limits, RequestBuffer

# Bytes taken from a socket per readable event; a body of 1 MiB arrives in 16 turns of the loop.
RECV_BYTES = 65536
# Closing after an answer: how long, and how many bytes, to wait for the client's FIN
# (gunicorn.util.close_graceful's bounds).
LINGER_S = 2.0
LINGER_BYTES = 65536
# A new connection counts as a busy thread until its first bytes arrive, for this long at most:
# a client opening several connections at once sends on each within a round trip, and without
# this one worker could take them all before any request arrived. Bounded, so connections that
# send nothing stop counting at once (and a flood of them slows accepting by this much only).
FRESH_S = 0.05
# Bytes a worker holds in requests it is reading, at most (each is also bounded: a head by
# gunicorn's limits, about 800 KB by default, a body by SERVICE_MAX_BODY_BYTES): past it, the
# request whose bytes overflow it is answered 503, so many connections each sending a large
# head or body slowly cannot exhaust memory. At least 4 of the largest requests.
READ_BUDGET_BYTES = 64 * 1_048_576
# A stopping worker keeps kept-alive connections this long at most (gthread's STOP_KEEPALIVE_LINGER).
STOPPING_KEEPALIVE_S = 2.0


class Connection(TConn):
    def __init__(self, cfg: Any, sock: socket.socket, client: Any, server: Any, limits: Limits) -> None:
        super().__init__(cfg, sock, client, server)  # the socket is now non-blocking
        # Each request gets a parser over the bytes the event loop read (handle() must not
        # make one reading the socket).
        self.initialized = True
        self.request = RequestBuffer(limits)  # what the event loop has read of the next request
        self.whole_request = False  # the body was read ahead with the head
        self.continue_sent = False  # the event loop answered "Expect: 100-continue"
        self.drained = 0  # bytes read while closing


class BalancedThreadWorker(ThreadWorker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Requests handed to the thread pool and not yet finished; changed on the main loop only.
        self.in_flight = 0
        self.last_busy = time.monotonic()  # when a request was last handed over or finished
        self.read_timeout = float(settings.SERVICE_REQUEST_READ_TIMEOUT)
        self.limits = Limits.from_gunicorn(self.cfg, settings.SERVICE_MAX_BODY_BYTES)
        self.read_budget = max(READ_BUDGET_BYTES, 4 * (self.limits.head + self.limits.body))
        self.buffered = 0  # bytes held by the connections being read
        # Connections being read, and connections closing: each in order of its deadline (every
        # entry gets now + a fixed delay), so expiry looks at the front only.
        self.reading: dict[Connection, float] = {}
        self.lingering: dict[Connection, float] = {}
        # New connections that have sent nothing yet, and when they stop counting (FRESH_S).
        self.fresh: dict[Connection, float] = {}

    # --- accepting ------------------------------------------------------------------------------
    def set_accept_enabled(self, enabled: bool | None) -> None:
        super().set_accept_enabled(bool(enabled) and self.in_flight + len(self.fresh) < self.cfg.threads)

    def accept(self, listener: socket.socket) -> None:
        try:
            client, address = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = Connection(self.cfg, client, address, listener.getsockname(), self.limits)
        self.poller.register(client, selectors.EVENT_READ, partial(self.on_readable, conn))
        self.start_reading(conn, b"")
        self.fresh[conn] = time.monotonic() + FRESH_S
        if self.in_flight + len(self.fresh) >= self.cfg.threads:
            self.set_accept_enabled(False)

    # --- reading a request on the event loop ------------------------------------------------------
    def start_reading(self, conn: Connection, data: bytes) -> None:
        """Read ``conn``'s next request (``data``: what already arrived); it is registered."""
        conn.request = RequestBuffer(self.limits)
        self.reading[conn] = time.monotonic() + self.read_timeout
        if data:
            self.received(conn, data)

    def on_readable(self, conn: Connection, _sock: socket.socket | None = None) -> None:
        data = receive(conn.sock)
        if data is None:
            return
        if not data:  # the client went away
            self.stop_reading(conn)
            self.close(conn)
            return
        self.received(conn, data)

    def received(self, conn: Connection, data: bytes) -> None:
        self.fresh.pop(conn, None)
        request = conn.request
        framing = request.feed(data)
        self.buffered += len(data)
        if framing is Framing.INCOMPLETE and self.buffered > self.read_budget:
            self.stop_reading(conn)
            self.answer_and_close(conn, 503, "Service Unavailable")
            return
        if framing is Framing.INCOMPLETE:
            if request.expects_continue and request.awaits_body and not conn.continue_sent:
                # The client waits for this before sending its body (RFC 9110 section 10.1.1).
                conn.continue_sent = True
                self.send_quietly(conn, b"HTTP/1.1 100 Continue\r\n\r\n")
            return
        self.stop_reading(conn)
        if framing is Framing.TOO_LARGE:
            self.answer_and_close(conn, 431, "Request Header Fields Too Large")
            return
        conn.whole_request = framing is Framing.WHOLE
        conn.parser = http.get_parser(self.cfg, [request.take()], conn.client)
        self.enqueue_req(conn)

    def stop_reading(self, conn: Connection) -> None:
        self.forget(conn, self.reading)
        self.buffered -= len(conn.request.data)

    def forget(self, conn: Connection, table: dict[Connection, float]) -> None:
        del table[conn]
        self.poller.unregister(conn.sock)

    def send_quietly(self, conn: Connection, data: bytes) -> None:
        """Best effort on the non-blocking socket: a few hundred bytes fit its send buffer."""
        with contextlib.suppress(OSError):
            conn.sock.send(data)

    def answer_and_close(self, conn: Connection, status: int, reason: str) -> None:
        # Logged as gunicorn logs the requests its parser refuses (the peer, never the bytes).
        peer = conn.client[0] if isinstance(conn.client, tuple) else conn.client
        self.log.warning("Invalid request from ip=%s: %s", peer, reason)
        # gunicorn.conf.py replaces util.write_error with the service's JSON error body.
        with contextlib.suppress(OSError):
            util.write_error(conn.sock, status, reason, "")
        self.close_after_answer(conn)

    # --- threads --------------------------------------------------------------------------------
    def enqueue_req(self, conn: Any) -> None:
        self.in_flight += 1
        self.last_busy = time.monotonic()
        super().enqueue_req(conn)
        if self.in_flight >= self.cfg.threads:
            self.set_accept_enabled(False)

    def handle_request(self, req: Any, conn: Any) -> bool:
        """Runs in a thread. A request whose body was not read ahead closes after its answer:
        reading (or skipping) that body would make this thread wait on the client."""
        if not conn.whole_request:
            req.force_close()
        if conn.continue_sent:
            req._expected_100_continue = False  # sent by the event loop already
        return bool(super().handle_request(req, conn))

    def finish_request(self, conn: Any, fs: Any) -> None:
        """Back on the main loop once a thread is done with ``conn``: the next request (maybe
        already pipelined behind the last one), keep-alive, or close."""
        # The main loop's next turn asks to accept again (room under worker_connections), which
        # set_accept_enabled now grants.
        self.in_flight -= 1
        self.last_busy = time.monotonic()
        conn.continue_sent = False
        try:
            keep_alive = not fs.cancelled() and fs.result()
        except Exception:
            keep_alive = False
        try:
            conn.sock.setblocking(False)
        except OSError:  # closed by the thread (an answer that failed half-way)
            self.close(conn)
            return
        if not keep_alive:
            self.close_after_answer(conn)
            return
        pipelined = conn.parser.unreader.take_buffered()
        if pipelined:
            self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_readable, conn))
            self.start_reading(conn, pipelined)
            return
        conn.set_timeout()
        if not self.alive:
            conn.timeout = min(conn.timeout, time.monotonic() + STOPPING_KEEPALIVE_S)
        self.keepalived_conns.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_client_socket_readable, conn))

    def on_client_socket_readable(self, conn: Any, client: socket.socket) -> None:
        """A kept-alive connection has bytes (or an EOF): read its next request here."""
        self.keepalived_conns.remove(conn)
        self.poller.modify(client, selectors.EVENT_READ, partial(self.on_readable, conn))
        self.start_reading(conn, b"")
        self.on_readable(conn)

    # --- closing --------------------------------------------------------------------------------
    def close_after_answer(self, conn: Connection) -> None:
        """gunicorn.util.close_graceful (RFC 9112 section 9.6) without blocking the loop: send
        FIN, then wait on the loop for the client's, so unread bytes do not reset the answer."""
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self.close(conn)
            return
        conn.drained = 0
        self.lingering[conn] = time.monotonic() + LINGER_S
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_lingering_readable, conn))

    def on_lingering_readable(self, conn: Connection, _sock: socket.socket) -> None:
        data = receive(conn.sock)
        if data is None:
            return
        conn.drained += len(data)
        if not data or conn.drained >= LINGER_BYTES:
            self.forget(conn, self.lingering)
            self.close(conn)

    def close(self, conn: Connection) -> None:
        self.fresh.pop(conn, None)
        self.nr_conns -= 1
        util.close(conn.sock)

    # --- deadlines ------------------------------------------------------------------------------
    def wait_for_and_dispatch_events(self, timeout: float | None) -> None:
        # Wake when the first fresh connection stops counting: accepting may resume then.
        if self.fresh:
            first = max(next(iter(self.fresh.values())) - time.monotonic(), 0.0)
            timeout = first if timeout is None else min(timeout, first)
        super().wait_for_and_dispatch_events(timeout)

    def murder_pending(self) -> None:
        """gunicorn calls this on every turn of the loop, also while stopping: here it expires
        fresh connections' claim on a thread, requests read too slowly and closings the client
        does not finish."""
        now = time.monotonic()
        while (conn := expired(self.fresh, now)) is not None:
            del self.fresh[conn]
        while (conn := expired(self.reading, now)) is not None:
            self.stop_reading(conn)
            if conn.request.started:
                self.answer_and_close(conn, 408, "Request Timeout")
            else:
                self.close(conn)
        while (conn := expired(self.lingering, now)) is not None:
            self.forget(conn, self.lingering)
            self.close(conn)
        if self.in_flight == 0 and not self.reading and not self.fresh:
            gc_policy.maintain(now - self.last_busy)


def receive(sock: socket.socket) -> bytes | None:
    """What a readable socket holds, ``b""`` once the client closed or the socket failed, or
    None when nothing is there after all (a spurious wake-up)."""
    try:
        return sock.recv(RECV_BYTES)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:
        return b""


def expired(table: dict[Connection, float], now: float) -> Connection | None:
    """The first connection of ``table`` (the earliest deadline) if its deadline has passed."""
    for conn, deadline in table.items():
        return conn if deadline <= now else None
    return None
