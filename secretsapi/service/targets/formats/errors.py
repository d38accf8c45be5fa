"""The formats' one error: a file that cannot be parsed, or a key that cannot be written."""

from __future__ import annotations


class FormatError(ValueError):
    """A file cannot be parsed or a key cannot be written; the message never holds values."""
