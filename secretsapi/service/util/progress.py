"""How a long operation tells its caller how far it got: ``progress(done, total)`` in secrets.

A plain callable, so the engine knows nothing of who listens (a job's row, a command's output).
Called from the operation's own thread; it must be cheap or throttle itself.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int], None]
