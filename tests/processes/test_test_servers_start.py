"""The tests' own servers (tests/processes/live.py's ``serve``, proxy.py's nginx) are ready only
when the process started listens: a port given to one that another process holds (another test's
server, under xdist) is never taken for it. Under CI, a test once got a 301 from another test's
plain-HTTP nginx that way. And ``free_port`` never gives one port to two tests within
PORT_HELD_S, whichever process asks."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.factories import file_secret
from tests.processes import live
from tests.processes import proxy as proxy_module

pytestmark = pytest.mark.slow


class _Healthy(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"status": "healthy", "workers": "up"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def impostor() -> Iterator[int]:
    """Another server on a loopback port, answering every GET 200 as a healthy service would."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Healthy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def first_given(held: int, fresh: Callable[[], int]) -> Callable[[], int]:
    """``fresh``, except that its first call gives ``held``, as a race with another test would."""
    calls: list[int] = []

    def given() -> int:
        calls.append(1)
        return held if len(calls) == 1 else fresh()
    return given


def test_serve_is_not_taken_for_started_while_another_server_answers_on_its_port(
    tmp_path: Path, impostor: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = live.write_definition(tmp_path, {"version": "1.0", "secrets": [file_secret("a")]})
    env = live.server_env(data_dir=tmp_path / "data", config=config)
    monkeypatch.setattr(live, "free_port", first_given(impostor, live.free_port))
    server = live.start_server(env, tmp_path / "serve.log")
    try:
        assert server.port != impostor
        assert live.listens_on(server.proc.pid, server.port)
    finally:
        server.kill()


def test_nginx_is_not_taken_for_started_while_another_process_listens_on_its_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        held = holder.getsockname()[1]
        monkeypatch.setattr(proxy_module, "free_port", first_given(held, live.free_port))
        proxy = proxy_module.start_proxy(tmp_path / "nginx", live.free_port())
        try:
            assert held not in (proxy.port, proxy.http_port)
            assert "Address already in use" in proxy.log()  # the first try, on the held port
        finally:
            proxy.stop()


def test_free_port_skips_a_port_it_gave_lately_and_forgets_it_after_the_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "PORT_LEDGER", tmp_path / "ports")
    kernel = [40001, 40001, 40002]
    monkeypatch.setattr(live, "kernel_port", lambda: kernel.pop(0))
    assert (live.free_port(), live.free_port()) == (40001, 40002)  # the kernel gave 40001 again
    held_since = time.time() - live.PORT_HELD_S - 1
    (tmp_path / "ports").write_text(f"40001:{held_since}\n40002:{time.time()}\n")
    kernel[:] = [40002, 40001]
    assert live.free_port() == 40001  # given longer ago than the hold
