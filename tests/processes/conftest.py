"""Fixtures for tests with real processes (see live.py)."""

from tests.processes.live import pg_database, pg_migrated, servers

__all__ = ["pg_database", "pg_migrated", "servers"]
