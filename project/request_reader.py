"""How much of a request has arrived: the worker's event loop reads a connection into a
``RequestBuffer`` until its head (and its body, by Content-Length) is complete, and only then
gives it a thread, so no thread ever waits on a client that dawdles.

The framing rules are gunicorn's (RFC 9112): the head ends at the first empty line, one empty
line may precede the request line, every line ends with CRLF. Whatever this module cannot
frame exactly (a bare LF, an over-long request line, a chunked or malformed body length) is
handed over as a head alone: gunicorn's parser then refuses it, or the app answers without
reading a body (411, 413), and the connection closes after that answer.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from gunicorn.http.message import DEFAULT_MAX_HEADERFIELD_SIZE, MAX_HEADERS, MAX_REQUEST_LINE


class Framing(enum.Enum):
    INCOMPLETE = "incomplete"  # more bytes are needed
    WHOLE = "whole"  # the head and the whole body are here
    HEAD = "head"  # the head is here; the body is not read ahead (the request will be refused)
    TOO_LARGE = "too_large"  # the head grew past what gunicorn accepts: answer 431


@dataclass(frozen=True)
class Limits:
    request_line: int
    head: int
    body: int

    @classmethod
    def from_gunicorn(cls, cfg: Any, body: int) -> Limits:
        """The bounds gunicorn's parser applies (limit_request_line, limit_request_fields,
        limit_request_field_size, with the same clamping), and the service's body limit."""
        line = cfg.limit_request_line
        line = MAX_REQUEST_LINE if line < 0 or line >= MAX_REQUEST_LINE else line
        fields = cfg.limit_request_fields
        fields = MAX_HEADERS if fields <= 0 or fields > MAX_HEADERS else fields
        field_size = cfg.limit_request_field_size
        field_size = DEFAULT_MAX_HEADERFIELD_SIZE if field_size <= 0 else field_size
        headers = fields * (field_size + 2) + 4
        # A line limit of 0 means unlimited: the head bound alone applies.
        return cls(request_line=line or headers, head=(line or headers) + 2 + headers, body=body)


class RequestBuffer:
    """The bytes of one request received so far, and whether they make a request yet."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.data = bytearray()
        self.framing = Framing.INCOMPLETE
        # Index of the first byte after the head, and of the first byte after the body, once known.
        self.head_end = -1
        self.end = -1
        self.expects_continue = False

    @property
    def started(self) -> bool:
        return bool(self.data)

    @property
    def awaits_body(self) -> bool:
        return self.framing is Framing.INCOMPLETE and self.head_end >= 0

    def take(self) -> bytes:
        """The bytes received, which this buffer then lets go of (a connection kept alive keeps
        its buffer until its next request)."""
        data, self.data = bytes(self.data), bytearray()
        return data

    def feed(self, chunk: bytes) -> Framing:
        """Add received bytes (never after the framing is decided) and say what they make."""
        old = len(self.data)
        self.data += chunk
        if self.head_end < 0:
            self.framing = self._scan_head(old)
        if self.end >= 0 and len(self.data) >= self.end:
            self.framing = Framing.WHOLE
        return self.framing

    def _scan_head(self, old: int) -> Framing:
        data = self.data
        start = 2 if data.startswith(b"\r\n") else 0
        # Only the new bytes are searched (with 3 before them for a terminator split across
        # reads): a client sending its head a byte at a time costs linear work, not quadratic.
        blank = data.find(b"\r\n\r\n", max(start, old - 3))
        if blank < 0:
            region = data[max(old - 1, 0):]
            lone_lf = region.count(b"\n") - region.startswith(b"\n") != region.count(b"\r\n")
            line_too_long = data.find(b"\r\n", start) < 0 and len(data) - start > self.limits.request_line + 2
            if lone_lf or line_too_long:
                return Framing.HEAD  # gunicorn answers 400 or 414 from these bytes alone
            return Framing.TOO_LARGE if len(data) > self.limits.head else Framing.INCOMPLETE
        self.head_end = blank + 4
        return self._frame_body(bytes(data[start:blank]))

    def _frame_body(self, head: bytes) -> Framing:
        request_line, *lines = head.split(b"\r\n")
        lengths, chunked, expect = [], False, False
        for line in lines:
            name, _, value = line.partition(b":")
            name, value = name.lower(), value.strip(b" \t")
            if name == b"content-length":
                lengths.append(value)
            elif name == b"transfer-encoding":
                chunked = True
            elif name == b"expect":
                expect = value.lower() == b"100-continue"
        if chunked or len(lengths) > 1 or (lengths and not lengths[0].isdigit()):
            return Framing.HEAD  # 411 from the app, or 400 from gunicorn
        length = int(lengths[0]) if lengths else 0
        if length > self.limits.body:
            return Framing.HEAD  # 413 from the app, which reads no body
        self.end = self.head_end + length
        # gunicorn honours the expectation in HTTP/1.1 only (RFC 9110 section 10.1.1).
        self.expects_continue = expect and length > 0 and request_line.endswith(b" HTTP/1.1")
        return Framing.INCOMPLETE
