"""Secrets orchestration service: Django interface over a framework-free engine."""

__version__ = "0.8.0"
