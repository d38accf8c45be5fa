"""The event loop's framing of a request (project/request_reader.py): when the bytes received
make a whole request, a head whose body is not read ahead, or not yet anything."""

from __future__ import annotations

import pytest
from gunicorn.config import Config

from project.request_reader import Framing, Limits, RequestBuffer

LIMITS = Limits.from_gunicorn(Config(), body=1000)


def feed_all(*chunks: bytes) -> RequestBuffer:
    buffer = RequestBuffer(LIMITS)
    for chunk in chunks:
        buffer.feed(chunk)
    return buffer


def test_limits_are_gunicorn_s_defaults() -> None:
    # limit_request_line 4094; 100 fields of 8190 bytes (each + CRLF), + the final CRLF CRLF.
    assert (LIMITS.request_line, LIMITS.head, LIMITS.body) == (4094, 4094 + 2 + 100 * 8192 + 4, 1000)


def test_a_head_without_body_is_whole_once_its_empty_line_arrives() -> None:
    buffer = RequestBuffer(LIMITS)
    assert buffer.feed(b"GET /health HTTP/1.1\r\nHost: x\r\n") is Framing.INCOMPLETE
    assert buffer.feed(b"\r\n") is Framing.WHOLE


def test_a_head_sent_a_byte_at_a_time_is_whole_at_its_last_byte() -> None:
    head = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    buffer = RequestBuffer(LIMITS)
    framings = [buffer.feed(head[i:i + 1]) for i in range(len(head))]
    assert framings == [Framing.INCOMPLETE] * (len(head) - 1) + [Framing.WHOLE]


def test_one_empty_line_before_the_request_line_is_allowed() -> None:
    assert feed_all(b"\r\n", b"GET / HTTP/1.1\r\n", b"\r\n").framing is Framing.WHOLE


def test_a_body_is_awaited_by_its_content_length() -> None:
    buffer = feed_all(b"POST /sync HTTP/1.1\r\nContent-Length: 10\r\n\r\n01234")
    assert (buffer.framing, buffer.awaits_body) == (Framing.INCOMPLETE, True)
    assert buffer.feed(b"56789") is Framing.WHOLE


def test_bytes_past_the_body_are_kept_for_the_next_request() -> None:
    buffer = feed_all(b"POST /sync HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}GET / HTTP/1.1\r\n")
    assert buffer.framing is Framing.WHOLE
    assert buffer.take().endswith(b"{}GET / HTTP/1.1\r\n")
    assert buffer.take() == b""


@pytest.mark.parametrize(
    "header",
    [b"Transfer-Encoding: chunked", b"Content-Length: 1001", b"Content-Length: 1x",
     b"Content-Length: 2\r\nContent-Length: 2"],
)
def test_a_body_that_is_chunked_too_large_or_of_unclear_length_is_not_read_ahead(header: bytes) -> None:
    buffer = feed_all(b"POST /sync HTTP/1.1\r\n" + header + b"\r\n\r\n")
    assert buffer.framing is Framing.HEAD


@pytest.mark.parametrize("start", [b"GET / HTTP/1.1\nHost: x\n", b"GET /" + b"a" * 4200])
def test_a_bare_lf_or_an_over_long_request_line_goes_to_gunicorn_at_once(start: bytes) -> None:
    assert feed_all(start).framing is Framing.HEAD


def test_a_head_past_gunicorn_s_bounds_is_too_large() -> None:
    buffer = feed_all(b"GET / HTTP/1.1\r\n")
    framing = Framing.INCOMPLETE
    while framing is Framing.INCOMPLETE:
        framing = buffer.feed(b"X-A: b\r\n" * 1000)
    assert framing is Framing.TOO_LARGE
    assert len(buffer.data) <= LIMITS.head + 8000


def test_100_continue_is_expected_only_for_an_http_1_1_body() -> None:
    head = b"POST /sync %s\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n"
    assert feed_all(head % (b"HTTP/1.1", 5)).expects_continue
    assert not feed_all(head % (b"HTTP/1.0", 5)).expects_continue
    assert not feed_all(head % (b"HTTP/1.1", 0)).expects_continue
