"""PostgreSQL for the recorder's row test (see tests/processes/live.py)."""

from tests.processes.live import pg_migrated

__all__ = ["pg_migrated"]
