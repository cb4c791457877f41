# amaranth: UnusedElaboratable=no
"""The simulation wrapper's readout layout (innet.sim.tb.networkbench.readout_map) and the
rows of its nodes' boot memories (boot_rows)."""

from __future__ import annotations

import random

import pytest

from innet.sim.tb.networkbench import READOUT, boot_rows, readout_map

BLOCKS = ("gen_seq", "chk_seq", "tx_count", "tx_hash", "rx_count", "rx_hash")


@pytest.mark.parametrize("collective_ids", [1, 2, 3, 4, 5, 8])
def test_every_pair_block_decodes_by_its_high_bits(collective_ids):
    """The readout finds a block by the address bits above the span and the peer in the bits
    below: each block starts at a multiple of its span (a power of two at least ``nodes``),
    above every named word, and no two blocks share an address."""
    for nodes in range(2, 130):
        ro = readout_map(nodes, collective_ids)
        span = ro["chk_seq"] - ro["gen_seq"]
        assert span >= nodes
        assert span & (span - 1) == 0
        words = [*READOUT.values(), ro["resp_sum_c"] + collective_ids - 1]
        taken = set(words)
        for name in BLOCKS:
            base = ro[name]
            assert base % span == 0, f"{nodes} nodes: block {name} at {base}, span {span}"
            for peer in range(nodes):
                address = base + peer
                assert address not in taken, f"{nodes} nodes: {name}[{peer}] overlaps"
                taken.add(address)
                assert address >> (span.bit_length() - 1) == base // span
                assert address % span == peer
                assert address < 1 << ro["width"]


@pytest.mark.parametrize("addr_width", [1, 7, 13])
def test_boot_rows_hold_each_targets_writes_in_order(addr_width):
    """Row ``i``'s slot of a target is its ``i``-th write with the enable set, or all zero
    once its writes have run out; targets without writes stay zero."""
    rng = random.Random(addr_width)
    slot = addr_width + 33
    writes = {t: [(rng.randrange(1 << addr_width), rng.getrandbits(32))
                  for _ in range(rng.randrange(12))] for t in rng.sample(range(40), 9)}
    rows = boot_rows(writes, addr_width)
    assert len(rows) == max(len(w) for w in writes.values())
    for i, row in enumerate(rows):
        assert row < 1 << (slot * 40)
        for t in range(40):
            field = row >> (slot * t) & ((1 << slot) - 1)
            pairs = writes.get(t, [])
            if i < len(pairs):
                address = field >> 32 & ((1 << addr_width) - 1)
                assert (field >> (slot - 1), address, field & 0xFFFF_FFFF) == (1, *pairs[i])
            else:
                assert field == 0
    assert boot_rows({}, addr_width) == []


@pytest.mark.parametrize(("depth", "error", "message"), [
    (0, ValueError, r"^Boot memory depth must be at least 1, not 0$"),
    (True, TypeError, r"^Boot memory depth must be an integer, not True$"),
    ("4", TypeError, r"^Boot memory depth must be an integer, not '4'$"),
])
def test_boot_depth_must_be_a_positive_integer(depth, error, message):
    from innet.gen.topology import torus
    from innet.sim.tb.networkbench import NetworkBench

    with pytest.raises(error, match=message):
        NetworkBench(torus((3,)), vector_depth=4, step_depth=2, boot_depth=depth)
