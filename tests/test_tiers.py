"""tests/tiers.py: what ``make check`` keeps, and its refusal of processes and sockets."""

from __future__ import annotations

import multiprocessing
import socket
import subprocess
from types import SimpleNamespace
from typing import Any

import pytest

from tests import tiers


class Item:
    """What the tier reads of a collected test: its markers and its fixtures."""

    def __init__(self, name: str, *markers: str, fixtures: tuple[str, ...] = ()) -> None:
        self.name, self.markers, self.fixturenames = name, set(markers), fixtures

    def get_closest_marker(self, name: str) -> Any:
        return name if name in self.markers else None

    def add_marker(self, marker: Any) -> None:
        self.markers.add(marker.name)


def test_the_unit_tier_keeps_unmarked_tests_and_reports_the_rest_deselected() -> None:
    items: list[Any] = [Item("plain"), *(Item(name, name) for name in tiers.NOT_UNIT),
                        Item("peer", fixtures=("vault",))]
    deselected: list[Any] = []
    config: Any = SimpleNamespace(hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)))
    tiers.mark_servers(items)
    tiers.keep_unit_tier(config, items)
    assert [item.name for item in items] == ["plain"]
    assert [item.name for item in deselected] == [*tiers.NOT_UNIT, "peer"]


def test_inside_the_unit_tier_a_process_is_refused_naming_the_slow_marker() -> None:
    before = subprocess.Popen.__init__
    with tiers.nothing_started(), pytest.raises(tiers.StartedSomething, match=r"mark the test pytest\.mark\.slow"):
        subprocess.run(["true"], check=False)
    assert subprocess.Popen.__init__ is before  # put back after


def test_inside_the_unit_tier_multiprocessing_is_refused_too() -> None:
    with tiers.nothing_started(), pytest.raises(tiers.StartedSomething, match=r"pytest\.mark\.slow"):
        multiprocessing.get_context("spawn").Process(target=print).start()


def test_inside_the_unit_tier_a_listening_socket_is_refused_naming_the_server_marker() -> None:
    with tiers.nothing_started(), socket.socket() as sock, pytest.raises(
            tiers.StartedSomething, match=r"mark the test pytest\.mark\.server"):
        sock.bind(("127.0.0.1", 0))


def test_in_make_test_a_test_the_unit_tier_keeps_is_refused_a_process_too() -> None:
    plain: Any = Item("plain")
    with tiers.held_to_the_unit_tier(plain), pytest.raises(tiers.StartedSomething, match=r"pytest\.mark\.slow"):
        subprocess.run(["true"], check=False)


def test_in_make_test_a_marked_test_may_start_what_its_marker_says() -> None:
    before = subprocess.Popen.__init__, socket.socket.bind
    for name in tiers.NOT_UNIT:
        marked: Any = Item(name, name)
        with tiers.held_to_the_unit_tier(marked):
            assert (subprocess.Popen.__init__, socket.socket.bind) == before
