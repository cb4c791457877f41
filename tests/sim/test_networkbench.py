"""The simulation wrapper's readout layout (innet.sim.tb.networkbench.readout_map)."""

from __future__ import annotations

import pytest

from innet.sim.tb.networkbench import READOUT, readout_map

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
