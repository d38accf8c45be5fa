"""Fixtures for the hostile-input tests that need a real server (see tests/processes/live.py)."""

from tests.processes.live import servers

__all__ = ["servers"]
