"""innet.hw.network: per-link pipeline stages and parameter checks (no elaboration)."""

from __future__ import annotations

import pytest

from innet.gen.topology import torus
from innet.hw.network import link_stage_map

RING = torus((4,))  # links (0, 1), (1, 2), (2, 3), (0, 3)


def test_one_count_for_every_link():
    assert link_stage_map(RING, 3) == {(0, 1): 3, (0, 3): 3, (1, 2): 3, (2, 3): 3}
    assert set(link_stage_map(RING)) == {(min(u, v), max(u, v))
                                         for u, _, v, _ in RING.link_array().tolist()}


def test_counts_per_link_in_either_order_and_missing_links_have_none():
    assert link_stage_map(RING, {(1, 0): 2, (2, 3): 7}) == {(0, 1): 2, (0, 3): 0, (1, 2): 0,
                                                            (2, 3): 7}


@pytest.mark.parametrize(("stages", "error", "message"), [
    (-1, ValueError, r"^Link stages must be at least 0, not -1$"),
    (1.5, TypeError, r"^Link stages must be an integer, not 1\.5$"),
    (True, TypeError, r"^Link stages must be an integer, not True$"),
    ({(0, 2): 1}, ValueError, (r"^Link stages name \(0, 2\), which is not a link of the "
                              r"topology$")),
    ({(0, 1): 1, (1, 0): 2}, ValueError, r"^Link stages name the link \(0, 1\) twice$"),
    ({(0, 1): -2}, ValueError, r"^Link stages of link \(0, 1\) must be at least 0, not -2$"),
    ({0: 1}, TypeError, r"^Link stages are keyed by node pairs \(u, v\), not 0$"),
])
def test_errors(stages, error, message):
    with pytest.raises(error, match=message):
        link_stage_map(RING, stages)
