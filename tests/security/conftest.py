"""Fixtures for the hostile-input tests that need a real server (see tests/processes/live.py)
or the shipped proxy in front of one (tests/processes/proxy.py)."""

from tests.processes.live import module_servers, pg_migrated, servers
from tests.processes.proxy import proxies

__all__ = ["module_servers", "pg_migrated", "proxies", "servers"]
