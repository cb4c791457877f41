"""Test order: the longest tests first.

The whole-network simulations (``test_network``, ``test_demo``) each take minutes (a Verilator
build of a whole network, then its scenarios); started last, they would leave one pytest-xdist
worker running alone at the end of the suite. Started first, the short tests fill the other
worker around them. Within each group the collection order is kept.
"""

from __future__ import annotations

__all__ = ["pytest_collection_modifyitems"]

#: Test files whose simulations take minutes.
LONG = ("test_network.py", "test_demo.py", "test_network_piuma.py")


def pytest_collection_modifyitems(session, config, items) -> None:
    def rank(item) -> int:
        if item.get_closest_marker("rtl") is None:
            return 2
        return 0 if item.path.name in LONG else 1

    items.sort(key=rank)
