"""Every algorithm on every size: exact allreduce, every block once, optimal volume."""

import math

import numpy as np
import pytest

from innet.gen.swing import (
    ALGORITHMS,
    MAX_ENTRIES,
    Schedule,
    build_schedule,
    snake_cycle,
    verify,
)
from innet.gen.swing.butterfly import PAPER_LIMIT
from innet.gen.swing.peers import torus_distance

SHAPES = [(2, 4), (4, 4), (6, 6), (10, 10), (4, 6, 4), (8, 8, 8)]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_exact_on_every_ring_from_2_to_64(algorithm):
    for p in range(2, 65):
        schedule = build_schedule(algorithm, p)
        verdict = verify(schedule, seed=p)
        assert verdict.message == "exact, every block once", (p, verdict.message)
        assert verdict.exact


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("shape", SHAPES)
def test_exact_on_tori(algorithm, shape):
    schedule = build_schedule(algorithm, shape)
    assert verify(schedule).exact, verify(schedule).message


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize(("shape", "multiport", "nonpow2"), [
    ((12,), False, "fold"), ((13,), True, "fold"), ((3, 5), True, "auto"),
    ((1, 10), True, "auto"), ((8, 1, 2), False, "auto"), ((2,), True, "auto")])
def test_exact_with_options(algorithm, shape, multiport, nonpow2):
    schedule = build_schedule(algorithm, shape, multiport=multiport, nonpow2=nonpow2)
    assert verify(schedule, n=37).exact  # n not a multiple of anything: uneven blocks


def test_small_vectors_leave_blocks_empty_and_still_work():
    schedule = build_schedule("swing-b", (8, 8))
    for n in (0, 1, 5, 255):
        assert verify(schedule, n=n).exact


def test_verify_catches_a_block_reduced_twice():
    good = build_schedule("swing-b", 8, multiport=False)
    arrays = {k: np.array(v) for k, v in good.arrays().items()}
    # At the first allgather step, reduce instead of copy: contributions get counted twice.
    arrays["reduce"][0, good.steps // 2] = True
    bad = Schedule("broken", good.shape, good.blocks, **arrays)
    verdict = verify(bad)
    assert not verdict.exact
    assert verdict.message.endswith(f"contributions, not {good.ranks}")


def test_verify_catches_a_swapped_block():
    good = build_schedule("swing-b", 4, multiport=False)
    arrays = {k: np.array(v) for k, v in good.arrays().items()}
    # Ranks 0 and 1 swap the wrong halves at step 0, consistently on both sides.
    for key in ("send", "recv"):
        arrays[key][0, 0, :2] = arrays[key][0, 0, 1::-1]
    bad = Schedule("broken", good.shape, good.blocks, **arrays)
    assert not verify(bad).exact


def test_verify_refuses_huge_states():
    schedule = build_schedule("swing-l", (64, 64))
    with pytest.raises(ValueError, match=r"^Verifying 4096 ranks x 16385 elements exceeds "
                                         r"the executor's limit of 67108864 values; verify a "
                                         r"smaller network$"):
        verify(schedule, n=16385)


@pytest.mark.parametrize("algorithm", ["swing-b", "recdoub-b", "ring", "bucket"])
@pytest.mark.parametrize("shape", [(2,), (16,), (64,), (4, 4), (2, 8), (8, 8, 8), (4, 16)])
def test_bandwidth_optimal_volume_for_powers_of_two(algorithm, shape):
    schedule = build_schedule(algorithm, shape)
    p = schedule.ranks
    assert np.allclose(schedule.fraction_sent(), 2 * (p - 1) / p)


@pytest.mark.parametrize("p", range(3, 65))
def test_swing_volume_within_the_paper_overhead(p):
    """Appendix A.2 sends nothing extra; Section 3.2 adds at most 1/p."""
    fraction = build_schedule("swing-b", p).fraction_sent()
    assert max(fraction) <= 2 * (p - 1) / p + 1 / p + 1e-12
    assert min(fraction) >= 2 * (p - 1) / p - 1e-12


def test_folding_costs_volume():
    """Folded non-power-of-two sides send the share across the fold link twice."""
    fold = max(build_schedule("swing-b", 12, nonpow2="fold").fraction_sent())
    paper = max(build_schedule("swing-b", 12, nonpow2="paper").fraction_sent())
    assert paper == pytest.approx(2 * 11 / 12)
    assert fold > paper + 0.9


@pytest.mark.parametrize("shape", [(16,), (8, 8), (4, 4, 4), (2, 8)])
def test_step_counts(shape):
    p = math.prod(shape)
    log = int(math.log2(p))
    assert build_schedule("swing-l", shape).steps == log  # latency deficiency 1
    assert build_schedule("swing-b", shape).steps == 2 * log
    assert build_schedule("recdoub-l", shape).steps == log
    assert build_schedule("recdoub-b", shape).steps == 2 * log
    assert build_schedule("ring", shape).steps == 2 * (p - 1)
    sides = [d for d in shape if d > 1]
    assert build_schedule("bucket", shape).steps == 2 * len(sides) * (max(sides) - 1)


@pytest.mark.parametrize(("algorithm", "shape", "count"), [
    ("swing-b", (4, 4), 4), ("swing-l", (8, 8, 8), 6), ("swing-b", (1, 8), 2),
    ("recdoub-b", (4, 4), 1), ("recdoub-l", 16, 1), ("ring", (4, 4), 2), ("bucket", (4, 4), 4),
    ("bucket", (2, 3, 4), 6)])
def test_collective_counts(algorithm, shape, count):
    assert build_schedule(algorithm, shape).collectives == count


def test_multiport_recursive_doubling_mirrors():
    schedule = build_schedule("recdoub-l", (4, 4), multiport=True)
    assert schedule.collectives == 4
    # Rank 5 = (1, 1): plain XOR 1 in dimension 0 -> (0, 1), in dimension 1 -> (1, 0);
    # mirrored through a -> -a: -((-1 % 4) ^ 1) % 4 = 2 -> (2, 1) and (1, 2).
    assert [schedule.entry(c, 0, 5).send_peer for c in range(4)] == [1, 4, 9, 6]


def test_odd_ring_runs_section_3_2():
    """p = 7: Swing on ranks 0..5; rank 6 swaps one block with each of them."""
    schedule = build_schedule("swing-b", 7, multiport=False)
    partners = [e.send_peer for e in schedule.table(6) if e.send_peer is not None]
    assert sorted(partners) == sorted(list(range(6)) * 2)  # once in each phase
    sizes = [e.send[1] - e.send[0] for e in schedule.table(6) if e.send_peer is not None]
    assert set(sizes) == {1}


@pytest.mark.parametrize(("args", "kwargs", "error", "message"), [
    (("swing", 8), {}, ValueError, (r"^Algorithm must be one of swing-b, swing-l, recdoub-b, "
                                   r"recdoub-l, ring, bucket, not 'swing'$")),
    (("ring", "8x8"), {}, TypeError, r"^Shape must be a sequence of integers, not '8x8'$"),
    (("ring", ()), {}, ValueError, r"^Shape must have at least one side$"),
    (("ring", (4, 0)), {}, ValueError, r"^Every side of shape 4x0 must be at least 1$"),
    (("ring", (1, 1)), {}, ValueError, r"^Shape 1x1 must have at least 2 ranks, not 1$"),
    (("ring", (2048, 1024)), {}, ValueError,
     r"^Shape 2048x1024 has 2097152 ranks, more than the 1048576 supported$"),
    (("ring", (2**200, 3)), {}, ValueError,
     r"^Shape <201-bit>x3 has <202-bit> ranks, more than the 1048576 supported$"),
    (("ring", 8), {"multiport": 1}, TypeError, r"^Multiport must be a bool, not 1$"),
    (("swing-b", 8), {"nonpow2": "odd"}, ValueError,
     r"^Non-power-of-two mode must be one of auto, paper, fold, not 'odd'$"),
    (("swing-l", 6), {"nonpow2": "paper"}, ValueError,
     (r"^nonpow2='paper' \(Swing Appendix A\.2 and Section 3\.2\) needs bandwidth-optimal "
     rf"Swing on a ring of at most {PAPER_LIMIT} ranks$")),
    (("ring", 4096), {}, ValueError, (r"^A ring schedule on 4096 ranks has 67092480 step-table "
                                     rf"entries, more than the {MAX_ENTRIES} supported$")),
    # Two ports per dimension, two phases of 20 steps and two more: 4 * 44 * 2^20 entries.
    (("swing-b", (2**19, 2)), {}, ValueError,
     (rf"^A swing-b schedule on 1048576 ranks has up to {4 * 44 * 2**20} step-table entries, "
      rf"more than the {MAX_ENTRIES} supported$")),
])
def test_bad_requests(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        build_schedule(*args, **kwargs)


@pytest.mark.parametrize("shape", [(2,), (9,), (4, 4), (3, 3), (3, 5), (2, 3), (5, 5, 5),
                                   (3, 1, 7), (3, 4, 5), (3, 3, 3, 3), (1, 6)])
def test_ring_follows_a_hamiltonian_cycle(shape):
    cycle = snake_cycle(shape)
    assert sorted(cycle.tolist()) == list(range(math.prod(shape)))
    assert (torus_distance(shape, cycle, np.roll(cycle, -1)) == 1).all()
    schedule = build_schedule("ring", shape)
    for c in range(2):
        successor = [schedule.entry(c, 0, int(r)).send_peer for r in cycle]
        expected = np.roll(cycle, -1 if c == 0 else 1).tolist()
        assert successor == expected


@pytest.mark.parametrize("algorithm", ["swing-b", "swing-l", "recdoub-b", "recdoub-l"])
@pytest.mark.parametrize("shape", [(8,), (6,), (5, 3), (4, 4, 4), (12, 4), (7,), (2, 9),
                                   (31,), (65,), (1025,)])
def test_a_butterfly_has_no_more_entries_than_its_size_check_allows(algorithm, shape):
    for multiport in (False, True):
        s = build_schedule(algorithm, shape, multiport=multiport)
        sides = sum(1 for d in shape if d > 1)
        steps = 2 * ((s.ranks - 1).bit_length() + 2)
        if len(shape) == 1 and s.ranks <= 1024:  # the paper's mode for rings
            steps = max(steps, 3 * s.ranks)
        assert s.collectives * s.steps <= (2 * sides if multiport else 1) * steps
