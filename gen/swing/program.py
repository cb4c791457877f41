"""Building blocks for schedule generators: a collective's list of rows, and assembly.

A *row* is one step of one collective for every rank: send and receive peers (``-1`` for none),
send and receive block ranges, and whether the step reduces. Generators append rows to a
:class:`Program` per collective; :func:`assemble` stacks the programs into a
:class:`~innet.gen.swing.schedule.Schedule`, padding shorter programs with idle rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from innet.gen.swing.schedule import Schedule

__all__ = ["Program", "assemble"]


class Program:
    """The rows of one collective over ``ranks`` ranks, with ``blocks`` blocks in its share."""

    def __init__(self, ranks: int, blocks: int) -> None:
        self.ranks = ranks
        self.blocks = blocks
        self.send_peer: list[np.ndarray] = []
        self.recv_peer: list[np.ndarray] = []
        self.send: list[np.ndarray] = []
        self.recv: list[np.ndarray] = []
        self.reduce: list[bool] = []

    def __len__(self) -> int:
        return len(self.reduce)

    def add(self, send_peer, recv_peer, send, recv, reduce: bool) -> None:
        """Append a row; a peer is dropped (set to ``-1``) where its range is empty."""
        send = np.asarray(send, dtype=np.int64).reshape(self.ranks, 2)
        recv = np.asarray(recv, dtype=np.int64).reshape(self.ranks, 2)
        self.send_peer.append(np.where(send[:, 0] == send[:, 1], -1, send_peer))
        self.recv_peer.append(np.where(recv[:, 0] == recv[:, 1], -1, recv_peer))
        self.send.append(send)
        self.recv.append(recv)
        self.reduce.append(bool(reduce))

    def exchange(self, peers, send, recv, reduce: bool) -> None:
        """Append a row where every rank sends to and receives from the same peer."""
        self.add(peers, peers, send, recv, reduce)

    def extend(self, other: Program) -> None:
        """Append all rows of ``other`` (same ranks and blocks)."""
        self.send_peer += other.send_peer
        self.recv_peer += other.recv_peer
        self.send += other.send
        self.recv += other.recv
        self.reduce += other.reduce

    def reversed(self) -> Program:
        """The rows in reverse order with sends and receives swapped, copying.

        Run after a reduce-scatter, this is the matching allgather: every block travels back
        along the path its partial sums came (Swing, Section 3.1: "the allgather works
        similarly, but each node selects its peer in the reverse order").
        """
        out = Program(self.ranks, self.blocks)
        out.send_peer = self.recv_peer[::-1]
        out.recv_peer = self.send_peer[::-1]
        out.send = self.recv[::-1]
        out.recv = self.send[::-1]
        out.reduce = [False] * len(self.reduce)
        return out

    def relabeled(self, mapping: np.ndarray) -> Program:
        """The same program with rank ``r`` renamed ``mapping[r]`` (block ranges unchanged)."""
        out = Program(self.ranks, self.blocks)
        inverse = np.empty_like(mapping)
        inverse[mapping] = np.arange(self.ranks)
        for peer_list, out_list in ((self.send_peer, out.send_peer),
                                    (self.recv_peer, out.recv_peer)):
            for peers in peer_list:
                moved = peers[inverse]
                out_list.append(np.where(moved < 0, -1, mapping[np.maximum(moved, 0)]))
        out.send = [rng[inverse] for rng in self.send]
        out.recv = [rng[inverse] for rng in self.recv]
        out.reduce = list(self.reduce)
        return out


def assemble(algorithm: str, shape: Sequence[int], programs: Sequence[Program]) -> Schedule:
    """Stack per-collective programs into a :class:`Schedule` (idle rows pad short ones)."""
    ranks = programs[0].ranks
    steps = max(len(p) for p in programs)
    count = len(programs)
    send_peer = np.full((count, steps, ranks), -1, dtype=np.int32)
    recv_peer = np.full((count, steps, ranks), -1, dtype=np.int32)
    send = np.zeros((count, steps, ranks, 2), dtype=np.int32)
    recv = np.zeros((count, steps, ranks, 2), dtype=np.int32)
    reduce = np.zeros((count, steps), dtype=bool)
    for c, program in enumerate(programs):
        rows = len(program)
        if rows:
            send_peer[c, :rows] = np.stack(program.send_peer)
            recv_peer[c, :rows] = np.stack(program.recv_peer)
            send[c, :rows] = np.stack(program.send)
            recv[c, :rows] = np.stack(program.recv)
            reduce[c, :rows] = program.reduce
    return Schedule(algorithm, tuple(shape), [p.blocks for p in programs], send_peer,
                    recv_peer, send, recv, reduce)
