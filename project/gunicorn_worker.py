"""gunicorn's gthread worker, accepting connections only while it has a free thread.

Every worker polls the same listening socket and the first to wake takes the connection. A
client that opens several keep-alive connections at once (a dashboard, a load balancer's
pool, a CI job's parallel calls) often had them all taken by one worker: measured with 8
connections on 2 workers, about one run in three had every connection on one worker, which
then served them on one core while the other sat idle. A worker whose threads are all busy
now leaves new connections in the kernel's queue for a worker that can start them at once;
when every worker is busy, they wait there instead of in one worker's thread-pool queue.
"""

from __future__ import annotations

from typing import Any

from gunicorn.workers.gthread import ThreadWorker


class BalancedThreadWorker(ThreadWorker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Requests handed to the thread pool and not yet finished; changed on the main loop only.
        self.in_flight = 0

    def set_accept_enabled(self, enabled: bool | None) -> None:
        super().set_accept_enabled(bool(enabled) and self.in_flight < self.cfg.threads)

    def enqueue_req(self, conn: Any) -> None:
        self.in_flight += 1
        super().enqueue_req(conn)
        if self.in_flight >= self.cfg.threads:
            self.set_accept_enabled(False)

    def finish_request(self, conn: Any, fs: Any) -> None:
        # The main loop's next turn asks to accept again (room under worker_connections), which
        # set_accept_enabled now grants.
        self.in_flight -= 1
        super().finish_request(conn, fs)
