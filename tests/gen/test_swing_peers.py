"""Swing's peer function (Eq. 2) and its multidimensional form, against the paper's examples."""

import numpy as np
import pytest

from innet.gen.swing import build_schedule, delta, dimension_sequence, pattern_peers, pi, rho
from innet.gen.swing.peers import torus_distance
from innet.gen.swing.rings import snake_cycle


def test_rho_and_delta_match_the_paper():
    # Section 3.1 / the authors' table: 1, -1, 3, -5, 11, -21, ...
    assert [rho(s) for s in range(8)] == [1, -1, 3, -5, 11, -21, 43, -85]
    for s in range(20):
        assert rho(s) == sum((-2) ** i for i in range(s + 1))
        assert delta(s) == (2 ** (s + 1) - (-1) ** (s + 1)) // 3
        assert delta(s) <= 2 ** s
        assert delta(s) % 2 == 1  # Lemma A.1


def test_figure_1_ring_of_16():
    """Section 1: step 0 pairs r with r XOR 1 in both algorithms; at step 1 Swing talks to the
    other neighbour while recursive doubling goes two hops; at step 2 Swing goes 3 hops."""
    swing = build_schedule("swing-b", 16, multiport=False)
    recdoub = build_schedule("recdoub-b", 16, multiport=False)
    for r in range(16):
        other_neighbour = (r - 1) % 16 if r % 2 == 0 else (r + 1) % 16
        assert [swing.entry(0, s, r).send_peer for s in range(3)] == [
            r ^ 1, other_neighbour, (r + 3) % 16 if r % 2 == 0 else (r - 3) % 16]
        assert [recdoub.entry(0, s, r).send_peer for s in range(4)] == [r ^ 1, r ^ 2, r ^ 4,
                                                                       r ^ 8]
        assert [swing.entry(0, s, r).send_peer for s in range(4)] == [pi(r, s, 16)
                                                                     for s in range(4)]
    # Two messages cross the link 1-2 at step 1 of recursive doubling, one in Swing.
    ring = np.arange(16)
    assert torus_distance((16,), ring, [recdoub.entry(0, 1, r).send_peer for r in ring]).max() == 2
    assert torus_distance((16,), ring, [swing.entry(0, 1, r).send_peer for r in ring]).max() == 1


def test_figure_5_first_step_on_4x4():
    schedule = build_schedule("swing-b", (4, 4))
    first = [schedule.entry(c, 0, 0).send_peer for c in range(schedule.collectives)]
    assert set(first[:2]) == {1, 4}  # plain: horizontal and vertical neighbours
    assert set(first[2:]) == {3, 12}  # mirrored: the other way round


def test_figure_6_small_dimension_finishes_first():
    """2x4: three steps; in the last one every collective works on the long dimension."""
    assert dimension_sequence([1, 2], 0) == [(0, 0), (1, 0), (1, 1)]
    assert dimension_sequence([1, 2], 1) == [(1, 0), (0, 0), (1, 1)]
    schedule = build_schedule("swing-l", (2, 4))
    assert schedule.steps == 3
    last = [schedule.entry(c, 2, 0).send_peer for c in range(4)]
    assert all(q // 4 == 0 for q in last)  # same row: the horizontal dimension


def test_square_torus_alternates_dimensions():
    assert dimension_sequence([3, 3], 0) == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]


@pytest.mark.parametrize("shape", [(8,), (4, 4), (8, 8), (2, 4), (4, 8, 2), (16, 4)])
@pytest.mark.parametrize("pattern", ["swing", "recdoub"])
@pytest.mark.parametrize("mirrored", [False, True])
def test_peers_are_involutions_in_one_dimension(shape, pattern, mirrored):
    peers, sequence = pattern_peers(pattern, shape, 0, mirrored)
    ranks = np.arange(int(np.prod(shape)))
    coords = np.stack(np.unravel_index(ranks, shape))
    for row, (dim, sigma) in zip(peers, sequence, strict=True):
        assert np.array_equal(row[row], ranks)
        assert (row != ranks).all()
        other = np.stack(np.unravel_index(row, shape))
        moved = (other != coords).any(axis=1)
        assert moved.tolist() == [d == dim for d in range(len(shape))]
        hops = torus_distance(shape, ranks, row)
        expected = delta(sigma) if pattern == "swing" else 2 ** sigma
        assert (hops == min(expected, shape[dim] - expected)).all()


def test_mirrored_is_the_reflection():
    plain, _ = pattern_peers("swing", (8, 8), 1, False)
    mirror, _ = pattern_peers("swing", (8, 8), 1, True)
    reflect = np.ravel_multi_index(tuple((-np.stack(np.unravel_index(np.arange(64), (8, 8))))
                                         % 8), (8, 8))
    assert np.array_equal(mirror[:, reflect], reflect[plain])


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: rho(-1), ValueError, r"^Step must be between 0 and 1024, not -1$"),
    (lambda: rho(10**20), ValueError, r"^Step must be between 0 and 1024, not 10{20}$"),
    (lambda: dimension_sequence([-1], 0), ValueError,
     r"^Step must be between 0 and 1024, not -1$"),
    (lambda: dimension_sequence([2, 2], 2), ValueError,
     r"^Start must be a dimension, 0\.\.1, not 2$"),
    (lambda: dimension_sequence([], 0), ValueError,
     r"^Steps per dimension must name at least one dimension$"),
    (lambda: pattern_peers("swing", (2**40,)), ValueError,
     r"^Shape 1099511627776 has 1099511627776 ranks, more than the 1048576 supported$"),
    (lambda: snake_cycle((1,)), ValueError, r"^Shape 1 must have at least 2 ranks, not 1$"),
    (lambda: rho(1.0), TypeError, r"^Step must be an integer, not 1\.0$"),
    (lambda: pi(4, 0, 4), ValueError, r"^Rank must be in 0\.\.3, not 4$"),
    (lambda: pi(0, 0, 0), ValueError, r"^Ring size must be positive, not 0$"),
    (lambda: pi(0, 0, "4"), TypeError, r"^Ring size must be an integer, not '4'$"),
    (lambda: pi(None, 0, 4), TypeError, r"^Rank must be an integer, not None$"),
    (lambda: pattern_peers("swing", (6,)), ValueError,
     r"^Every side must be a power of two, not 6$"),
])
def test_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()
