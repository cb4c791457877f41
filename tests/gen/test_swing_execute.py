"""The executor's semantics, the deadlock freedom of the step-table order, the golden model."""

import numpy as np
import pytest

from innet.gen import ops
from innet.gen.swing import ALGORITHMS, build_schedule, execute, golden, verify


def rendezvous(schedule, tables=None):
    """Run every rank's step table with blocking MPI_Sendrecv semantics and tag matching.

    A transfer completes only when the sender is at the entry and the receiver is at the
    entry with the same (collective, step) tag that receives from it; a rank moves on when both
    transfers of its entry are done. Returns the number of ranks that finished.
    """
    ranks = schedule.ranks
    tables = tables or [schedule.table(r) for r in range(ranks)]
    at = [0] * ranks
    sent = [False] * ranks
    got = [False] * ranks
    progress = True
    while progress:
        progress = False
        for r in range(ranks):
            if at[r] == len(tables[r]):
                continue
            entry = tables[r][at[r]]
            if not got[r] and entry.recv_peer is None:
                got[r] = progress = True
            if not sent[r]:
                q = entry.send_peer
                if q is None:
                    sent[r] = progress = True
                elif at[q] < len(tables[q]) and not got[q]:
                    theirs = tables[q][at[q]]
                    if ((theirs.collective, theirs.step) == (entry.collective, entry.step)
                            and theirs.recv_peer == r and theirs.recv == entry.send):
                        sent[r] = got[q] = progress = True
            if sent[r] and got[r]:
                at[r] += 1
                sent[r] = got[r] = False
                progress = True
    return sum(at[r] == len(tables[r]) for r in range(ranks))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("shape", [(7,), (12,), (2, 4), (3, 4)])
def test_step_major_order_never_deadlocks(algorithm, shape):
    schedule = build_schedule(algorithm, shape)
    assert rendezvous(schedule) == schedule.ranks


def test_the_deadlock_check_can_fail():
    schedule = build_schedule("swing-l", 8)
    tables = [schedule.table(r) for r in range(8)]
    tables[0] = tables[0][::-1]  # rank 0 runs its steps backwards
    assert rendezvous(schedule, tables) < 8


def test_sends_read_data_before_the_step_receives():
    # Latency-optimal Swing on 2 ranks: both send and receive the whole vector in one step.
    schedule = build_schedule("swing-l", 2, multiport=False)
    out = execute(schedule, np.array([[1, 2], [10, 20]]), lambda a, b: a + b)
    assert out.tolist() == [[11, 22], [11, 22]]


def test_trailing_axes_travel_with_elements():
    schedule = build_schedule("ring", 3)
    data = np.arange(3 * 6 * 2).reshape(3, 6, 2)
    out = execute(schedule, data, lambda a, b: a + b)
    assert (out == data.sum(axis=0)).all()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize(("op", "dtype"), [("add", "int32"), ("mul", "uint32"), ("xor", "int32"),
                                           ("min", "fp32"), ("max", "fp32"), ("or", "uint32")])
def test_golden_matches_associative_folds(algorithm, op, dtype):
    """For associative, commutative operations every order gives the fold of all inputs."""
    rng = np.random.default_rng(1)
    schedule = build_schedule(algorithm, (3, 4))
    n = 29
    if dtype == "fp32":
        values = rng.standard_normal((12, n)).astype(np.float32)
        values[0, :3] = [np.nan, -0.0, 0.0]
        values[5, 1:3] = [0.0, -0.0]
        bits = ops.to_bits(values, dtype)
    else:
        bits = rng.integers(0, 2**32, size=(12, n), dtype=np.uint64).astype(np.uint32)
    result = golden(schedule, op, dtype, bits)
    expected = ops.fold(op, dtype, list(bits))
    assert result.dtype == np.uint32
    assert (result == expected).all()


def test_golden_follows_the_schedule_order_in_floating_point():
    """Swing-L on 4 ranks: rank 0 computes (x0 + x1) + (x3 + x2), which loses the ones."""
    values = np.array([[1e8], [1.0], [-1e8], [1.0]], dtype=np.float32)
    schedule = build_schedule("swing-l", 4, multiport=False)
    result = ops.from_bits(golden(schedule, "add", "fp32", ops.to_bits(values, "fp32")), "fp32")
    x = values[:, 0]
    by_hand = np.float32(np.float32(x[0] + x[1]) + np.float32(x[3] + x[2]))
    assert result[0, 0] == by_hand == np.float32(0.0)
    assert np.float64(x.astype(np.float64).sum()) == 2.0  # the exact sum differs


def test_bandwidth_optimal_ranks_agree_bit_for_bit():
    """After the allgather every rank holds the owner's copy of every block."""
    rng = np.random.default_rng(2)
    schedule = build_schedule("swing-b", (4, 4))
    bits = ops.to_bits(rng.standard_normal((16, 40)).astype(np.float32) * 1e3, "fp32")
    result = golden(schedule, "add", "fp32", bits)
    assert (result == result[0]).all()


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda s: golden(s, "xor", "fp32", np.zeros((4, 2), np.uint32)), ValueError,
     r"^Operation xor is not defined on fp32$"),
    (lambda s: golden(s, "add", "int32", np.zeros((4, 2), np.int32)), TypeError,
     r"^Inputs must be uint32 bit patterns, not int32$"),
    (lambda s: golden(s, "add", "int32", np.zeros(4, np.uint32)), ValueError,
     r"^Inputs must have shape \(ranks, n\), not \(4,\)$"),
    (lambda s: execute(s, np.zeros((3, 2)), np.add), ValueError,
     r"^Data must have shape \(ranks=4, n, \.\.\.\), not \(3, 2\)$"),
])
def test_bad_inputs(call, error, message):
    with pytest.raises(error, match=message):
        call(build_schedule("swing-b", 4))


@pytest.mark.parametrize("call", [
    lambda: execute("swing-b", np.zeros((4, 2)), np.add),
    lambda: golden("swing-b", "add", "int32", np.zeros((4, 2), np.uint32)),
    lambda: verify("swing-b"),
])
def test_a_schedule_is_required(call):
    with pytest.raises(TypeError, match=r"^Schedule must be a Schedule, not str$"):
        call()
