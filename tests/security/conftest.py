"""Fixtures for the hostile-input tests that need a real server (see tests/processes/live.py)."""

from tests.processes.live import pg_database, servers

__all__ = ["pg_database", "servers"]
