"""A TCP proxy that adds network latency: one delay per request/response round trip.

Forwards bytes both ways between a client and one upstream (``--upstream host:port``) on
loopback. The delay is applied per round trip, on the client's side: on each connection, the
first client->server chunk after the server last sent something (or after the connection
opened) waits ``--delay-ms`` before it is forwarded; the rest of that request and every
server->client byte pass at once. For HTTP/1.1 without pipelining (boto3, hvac, the kubernetes
client) that is one delay per request, like a store whose round trip is ``delay`` longer; the
TCP connect itself is not delayed (clients keep connections alive, so it is rare). Connections
are independent: N concurrent requests on N connections all wait the same delay at once.

Run: ``python bench/latency_proxy.py --upstream 127.0.0.1:5000 --delay-ms 50 [--port 0]``;
it prints ``listening <port>`` once ready and runs until killed (SIGTERM) or stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys

CHUNK = 65536


class Proxy:
    def __init__(self, upstream_host: str, upstream_port: int, delay: float) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.delay = delay

    async def handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_writer.close()
            return
        # True when the next client chunk starts a new request: at the start, and whenever the
        # server has answered since the client last spoke.
        turn = {"new_request": True}
        try:
            await asyncio.gather(self._upstream(client_reader, server_writer, turn),
                                 self._downstream(server_reader, client_writer, turn))
        finally:
            for writer in (client_writer, server_writer):
                writer.close()

    async def _upstream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        turn: dict[str, bool]) -> None:
        with contextlib.suppress(ConnectionError):
            while chunk := await reader.read(CHUNK):
                if turn["new_request"]:
                    turn["new_request"] = False
                    if self.delay:
                        await asyncio.sleep(self.delay)
                writer.write(chunk)
                await writer.drain()
        with contextlib.suppress(OSError):
            writer.write_eof()  # the client is done sending: pass the half-close on

    async def _downstream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                          turn: dict[str, bool]) -> None:
        with contextlib.suppress(ConnectionError):
            while chunk := await reader.read(CHUNK):
                turn["new_request"] = True
                writer.write(chunk)
                await writer.drain()
        with contextlib.suppress(OSError):
            writer.write_eof()


async def serve(upstream: str, delay_ms: float, port: int) -> None:
    host, _, upstream_port = upstream.rpartition(":")
    proxy = Proxy(host or "127.0.0.1", int(upstream_port), delay_ms / 1000)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", port)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    loop = asyncio.get_running_loop()
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)  # the parent went away: stop
    async with server:
        await asyncio.wait([stdin_closed, asyncio.ensure_future(server.serve_forever())],
                           return_when=asyncio.FIRST_COMPLETED)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="host:port to forward to")
    parser.add_argument("--delay-ms", type=float, default=50.0, help="added per request round trip")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one)")
    args = parser.parse_args()
    asyncio.run(serve(args.upstream, args.delay_ms, args.port))


if __name__ == "__main__":
    main()
