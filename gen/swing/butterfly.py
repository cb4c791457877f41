"""Swing and recursive-doubling schedules, latency-optimal and bandwidth-optimal.

Both algorithms exchange data along a butterfly-like pattern (:mod:`innet.gen.swing.peers`):

- *latency-optimal* (Swing Section 3.1.2, recursive doubling Section 2.3.2): at every step each
  rank exchanges its whole share with its peer and reduces; one block per collective.
- *bandwidth-optimal* (Swing Section 3.1.1, Figure 3; Rabenseifner, Section 2.3.3): a
  reduce-scatter that halves the data every step, then the allgather that retraces it.
  At reduce-scatter step ``s`` rank ``r`` sends its peer ``q = π(r, s)`` the blocks of every
  rank ``q`` reaches from step ``s + 1`` on (``get_rs_idxs`` of Figure 3). For power-of-two
  sides those sets form a binary tree, so numbering blocks in the order of the tree (the
  logical remapping of Section 3.1.1) makes every send one contiguous range: block position of
  rank ``z`` = the steps of the unique path from rank 0 to ``z``, read as a binary number with
  step 0 as the most significant bit.

Sides that are not powers of two:

- ``"fold"`` (any algorithm, any shape; Section 2.3.2, and the per-dimension shrink of the
  authors' implementation): per dimension, the ranks past the largest power of two ``d'`` below
  the side send their share to the rank ``d - d'`` places before them, which reduces it; the
  power-of-two core runs the algorithm; the folded ranks get the result back at the end. Two
  extra steps per such dimension, and the folded share crosses one link twice.
- ``"paper"`` (bandwidth-optimal Swing on a ring): Appendix A.2 for even ``p`` (every rank
  sends each block once, at the last step it could; no extra data) and Section 3.2 for odd
  ``p`` (Swing on ``p - 1`` ranks; the last rank swaps one block with every other rank).
  These sets are not one contiguous range in any block order in general (e.g. ``p = 10``), so
  a step whose blocks form several runs is split into several consecutive steps, one run each,
  and the last rank's swaps of Section 3.2, which the paper runs concurrently, take one step
  each: the data volume is optimal, the step count grows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from innet.gen.swing.peers import coordinates, pattern_peers, rho
from innet.gen.swing.program import Program, assemble
from innet.gen.swing.schedule import Schedule

__all__ = ["NONPOW2_MODES", "PAPER_LIMIT", "butterfly_schedule"]

#: How sides that are not powers of two are handled.
NONPOW2_MODES = ("auto", "paper", "fold")

#: Largest ring the ``"paper"`` mode builds (its set computation is quadratic in the ranks).
PAPER_LIMIT = 1024


def _is_pow2(d: int) -> bool:
    return d & (d - 1) == 0


def _core_side(d: int) -> int:
    """The largest power of two not above ``d``."""
    return 1 << (d.bit_length() - 1)


def _tree_positions(peers: np.ndarray) -> np.ndarray:
    """Block position of every rank: its path from rank 0, step 0 as the top bit."""
    steps, ranks = peers.shape
    words = np.full(ranks, -1, dtype=np.int64)
    words[0] = 0
    reached = np.zeros(1, dtype=np.int64)
    for s in range(steps):
        new = peers[s, reached]
        words[new] = words[reached] | (1 << (steps - 1 - s))
        reached = np.concatenate([reached, new])
    if len(reached) != ranks or np.unique(words).size != ranks or words.min() < 0:
        raise RuntimeError("Internal error: the peer pattern is not a butterfly")
    return words


def _core_program(peers: np.ndarray, bandwidth: bool) -> Program:
    """Rows of one collective on a power-of-two core (ranks numbered 0..P'-1)."""
    steps, ranks = peers.shape
    if not bandwidth:
        program = Program(ranks, 1)
        whole = np.tile([0, 1], (ranks, 1))
        for s in range(steps):
            program.exchange(peers[s], whole, whole, reduce=True)
        return program
    program = Program(ranks, ranks)
    position = _tree_positions(peers)
    for s in range(steps):
        shift = steps - 1 - s
        size = 1 << shift
        mine = (position >> shift) << shift
        theirs = (position[peers[s]] >> shift) << shift
        program.exchange(peers[s], np.stack([theirs, theirs + size], axis=1),
                         np.stack([mine, mine + size], axis=1), reduce=True)
    program.extend(program.reversed())
    return program


def _embed(program: Program, ranks: int, index: np.ndarray) -> Program:
    """The core program on ``ranks`` ranks, core rank ``i`` being rank ``index[i]``."""
    out = Program(ranks, program.blocks)
    for sp, rp, sr, rr, red in zip(program.send_peer, program.recv_peer, program.send,
                                   program.recv, program.reduce, strict=True):
        send_peer = np.full(ranks, -1)
        recv_peer = np.full(ranks, -1)
        send = np.zeros((ranks, 2), dtype=np.int64)
        recv = np.zeros((ranks, 2), dtype=np.int64)
        send_peer[index] = np.where(sp < 0, -1, index[np.maximum(sp, 0)])
        recv_peer[index] = np.where(rp < 0, -1, index[np.maximum(rp, 0)])
        send[index] = sr
        recv[index] = rr
        out.add(send_peer, recv_peer, send, recv, red)
    return out


def _fold_rows(shape: tuple[int, ...], blocks: int) -> tuple[Program, Program]:
    """Fold rows (before the core) and unfold rows (after it), one per non-power-of-two side."""
    ranks = int(np.prod(shape))
    coords = coordinates(shape)
    fold = Program(ranks, blocks)
    active = np.ones(ranks, dtype=bool)
    for dim, side in enumerate(shape):
        core = _core_side(side)
        if core == side:
            continue
        senders = active & (coords[dim] >= core)
        target = coords.copy()
        target[dim] = coords[dim] - (side - core)
        partner = np.ravel_multi_index(tuple(target), shape, mode="wrap")
        send_peer = np.full(ranks, -1)
        recv_peer = np.full(ranks, -1)
        send = np.zeros((ranks, 2), dtype=np.int64)
        recv = np.zeros((ranks, 2), dtype=np.int64)
        src = np.nonzero(senders)[0]
        dst = partner[src]
        send_peer[src] = dst
        send[src] = (0, blocks)
        recv_peer[dst] = src
        recv[dst] = (0, blocks)
        fold.add(send_peer, recv_peer, send, recv, reduce=True)
        active &= ~senders
    return fold, fold.reversed()


def _paper_ring(p: int) -> Program:
    """Bandwidth-optimal Swing on a ring of ``p`` (not a power of two): Appendix A.2, Sec. 3.2."""
    q = p - (p % 2)  # the ranks that run Swing; rank p-1 is the extra one when p is odd
    steps = (q - 1).bit_length()
    r = np.arange(q)
    peers = np.stack([np.where(r % 2 == 0, (r + rho(s)) % q, (r - rho(s)) % q)
                      for s in range(steps)])
    # Appendix A.2: rank x sends block z at the last step s whose peer still reaches z.
    reach = np.eye(q, dtype=bool)
    when = np.full((q, q), -1, dtype=np.int16)
    for s in reversed(range(steps)):
        candidate = reach[peers[s]]
        fresh = candidate & (when < 0)
        fresh[r, r] = False
        when[fresh] = s
        reach |= candidate
    np.fill_diagonal(when, steps)
    if (when < 0).any():
        raise RuntimeError(f"Internal error: Swing on {q} ranks does not reach every rank")
    # Block order: the smallest path word from rank 0 (the power-of-two remapping).
    nodes = np.zeros(1, dtype=np.int64)
    words = np.zeros(1, dtype=np.int64)
    for s in range(steps):
        nodes = np.concatenate([nodes, peers[s, nodes]])
        words = np.concatenate([words, words | (1 << (steps - 1 - s))])
    key = np.full(q, np.iinfo(np.int64).max)
    np.minimum.at(key, nodes, words)
    order = np.argsort(key, kind="stable")
    position = np.empty(q, dtype=np.int64)
    position[order] = np.arange(q)

    program = Program(p, p)
    for s in range(steps):
        mine = (when == s)[:, order]
        padded = np.pad(mine, ((0, 0), (1, 1)))
        starts = padded[:, 1:-1] & ~padded[:, :-2]
        ends = padded[:, 1:-1] & ~padded[:, 2:]
        runs = starts.sum(axis=1)
        rank_of_start, start_at = np.nonzero(starts)
        _, end_at = np.nonzero(ends)
        first = np.concatenate([[0], np.cumsum(runs)[:-1]])
        nth = np.arange(len(rank_of_start)) - first[rank_of_start]
        for j in range(int(runs.max())):
            send = np.zeros((p, 2), dtype=np.int64)
            pick = nth == j
            send[rank_of_start[pick], 0] = start_at[pick]
            send[rank_of_start[pick], 1] = end_at[pick] + 1
            peer = np.full(p, -1)
            peer[:q] = peers[s]
            recv = np.zeros((p, 2), dtype=np.int64)
            recv[:q] = send[peers[s]]
            program.exchange(peer, send, recv, reduce=True)
    if p != q:  # Section 3.2: the extra rank swaps one block with each of the others
        extra = p - 1
        for z in range(q):
            peer = np.full(p, -1)
            peer[z], peer[extra] = extra, z
            send = np.zeros((p, 2), dtype=np.int64)
            recv = np.zeros((p, 2), dtype=np.int64)
            send[z] = recv[extra] = (q, q + 1)
            send[extra] = recv[z] = (position[z], position[z] + 1)
            program.exchange(peer, send, recv, reduce=True)
    program.extend(program.reversed())
    return program


def butterfly_schedule(pattern: str, shape: Sequence[int], bandwidth: bool,
                       multiport: bool, nonpow2: str = "auto") -> Schedule:
    """A Swing or recursive-doubling allreduce schedule on a torus of ``shape``.

    Parameters
    ----------
    pattern : {"swing", "recdoub"}
        The peer pattern (:func:`~innet.gen.swing.peers.pattern_peers`).
    shape : sequence of int
        Torus shape (row-major ranks; sides of 1 are ignored).
    bandwidth : bool
        Bandwidth-optimal (reduce-scatter + allgather) instead of latency-optimal.
    multiport : bool
        Run ``2·D`` collectives, ``D`` plain and ``D`` mirrored (Section 4.1), instead of one.
    nonpow2 : {"auto", "paper", "fold"}
        Handling of sides that are not powers of two (module documentation). ``"paper"`` needs
        bandwidth-optimal Swing on a ring of at most :data:`PAPER_LIMIT` ranks; ``"auto"``
        chooses it there and ``"fold"`` everywhere else.

    Returns
    -------
    Schedule
    """
    shape = tuple(int(d) for d in shape)
    ranks = int(np.prod(shape))
    sides = [i for i, d in enumerate(shape) if d > 1]
    name = f"{'swing' if pattern == 'swing' else 'recdoub'}-{'b' if bandwidth else 'l'}"
    starts = [(dim, False) for dim in sides]
    starts = starts + [(dim, True) for dim in sides] if multiport else starts[:1]
    paper_ok = pattern == "swing" and bandwidth and len(sides) == 1 and ranks <= PAPER_LIMIT
    if nonpow2 == "paper" and not paper_ok:
        raise ValueError("nonpow2='paper' (Swing Appendix A.2 and Section 3.2) needs "
                         f"bandwidth-optimal Swing on a ring of at most {PAPER_LIMIT} ranks")
    if all(_is_pow2(d) for d in shape):
        mode = "pow2"
    else:
        mode = "paper" if nonpow2 in ("auto", "paper") and paper_ok else "fold"

    if mode == "paper":
        plain = _paper_ring(ranks)
        q = ranks - (ranks % 2)
        mirror = np.arange(ranks)
        mirror[:q] = (-np.arange(q)) % q
        programs = [plain, plain.relabeled(mirror)] if multiport else [plain]
        return assemble(name, shape, programs)

    core_shape = tuple(_core_side(d) for d in shape)
    core_index = np.ravel_multi_index(tuple(coordinates(core_shape)), shape)
    core_ranks = int(np.prod(core_shape))
    blocks = core_ranks if bandwidth else 1
    fold, unfold = _fold_rows(shape, blocks)
    programs = []
    for dim, mirrored in starts:
        peers, _ = pattern_peers(pattern, core_shape, dim, mirrored)
        core = _embed(_core_program(peers, bandwidth), ranks, core_index)
        program = Program(ranks, blocks)
        program.extend(fold)
        program.extend(core)
        program.extend(unfold)
        programs.append(program)
    return assemble(name, shape, programs)
