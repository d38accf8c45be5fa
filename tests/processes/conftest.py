"""Fixtures for tests with real processes (see live.py)."""

from tests.processes.live import module_servers, pg_database, pg_migrated, servers

__all__ = ["module_servers", "pg_database", "pg_migrated", "servers"]
