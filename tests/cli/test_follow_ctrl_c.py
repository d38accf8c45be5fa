"""A follower's Ctrl-C is raised where the follower waits, never wherever the signal fell: raised
inside a finalizer it was printed as "Exception ignored" and the follower went on for good."""

from __future__ import annotations

import gc
import os
import signal

import pytest

from secretsapi.cli.auditrows import until_ctrl_c


class Finalized:
    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while a finalizer runs


def test_ctrl_c_is_raised_at_the_followers_next_wait_not_where_it_fell() -> None:
    with until_ctrl_c() as wait:
        Finalized()
        gc.collect()  # with Python's own handler the Ctrl-C was lost in the finalizer
        with pytest.raises(KeyboardInterrupt):
            wait(5)


def test_the_previous_handler_is_back_after_the_follow() -> None:
    before = signal.getsignal(signal.SIGINT)
    with until_ctrl_c() as wait:
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            wait(0)
    assert signal.getsignal(signal.SIGINT) is before
