"""The host-style allreduce schedule: who sends which blocks to whom, step by step.

A :class:`Schedule` is the contract between the schedule generators of :mod:`innet.gen.swing`
(Swing, recursive doubling, ring, bucket), the executors and golden models, the congestion model,
and the endpoint step tables in the configuration image.

Model
-----
The vector of ``n`` elements is split into ``collectives`` contiguous *shares*, one per collective
(Swing, Section 4.1: one allreduce per port, ``2·D`` on a D-dimensional torus). Share ``c`` is
split into ``blocks[c]`` contiguous *blocks*. For every collective ``c``, step ``s`` and rank
``r`` the schedule holds one :class:`Entry`:

- ``send_peer`` / ``recv_peer``: the rank ``r`` sends to and receives from (equal for Swing and
  recursive doubling, different for ring and bucket), or ``None`` when ``r`` does not send or
  does not receive at that step;
- ``send`` / ``recv``: half-open block ranges ``(lo, hi)`` of share ``c``; a range is empty
  exactly when the matching peer is ``None``;
- ``reduce``: ``True`` if the received blocks are combined into the rank's own copy
  (reduce-scatter), ``False`` if they overwrite it (allgather).

Every send is matched: if rank ``r`` sends blocks ``[lo, hi)`` to ``q`` at ``(c, s)``, then ``q``
receives exactly blocks ``[lo, hi)`` from ``r`` at ``(c, s)``. The constructor checks this.

Blocks to elements
------------------
Share ``c`` covers elements ``[c·n // C, (c+1)·n // C)`` of the vector (``C`` collectives), and
block ``b`` of a share of ``m`` elements covers its elements ``[b·m // B, (b+1)·m // B)``
(``B = blocks[c]``). Shares and blocks are balanced (sizes differ by at most one element), and
when ``n`` is smaller than the number of shares or blocks some of them are empty: an entry whose
block range covers no element moves nothing, and both sides of it know that from ``n`` alone.

Execution order
---------------
Rank ``r`` runs its step table :meth:`Schedule.table` in *step-major* order: for every step
``s`` in turn, the entries of collectives ``0, 1, ..., C-1``. Each entry is one blocking
send-and-receive (like ``MPI_Sendrecv``): the rank sends its ``send`` blocks to ``send_peer`` and
receives the ``recv`` blocks from ``recv_peer`` concurrently, and goes on to its next entry only
when both are done; the data it sends is its copy *before* the entry's receive is applied. Idle
entries complete at once.

This order cannot deadlock: every rank runs the same sequence of ``(s, c)`` entries, and every
send of entry ``k`` is matched by a receive of the same entry ``k`` at its peer. By induction on
``k``: once every rank has finished its entries before ``k``, every rank posts entry ``k``, every
transfer of entry ``k`` finds its partner, and all of them complete. Entries of the same step in
different collectives touch disjoint shares and use different ports, so an endpoint may also run
them concurrently; the sequential order above is the reference.

What a receiver must do: a rank's peers can run ahead of it (in Swing, rank 3 may finish step
0 with rank 2 and send its step-1 data to rank 0 while rank 0 still waits for rank 1's step-0
data), so messages for later entries can arrive early, from other sources. A receiver tells
messages apart by ``(collective, step)`` and source, accepts early ones into a buffer instead
of stalling its ejection port (stalling can block the message it is waiting for behind them),
and applies receives in table order: the reduction order, and with it the floating-point
result of :func:`innet.gen.swing.execute.golden`, is the table order.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from innet.gen.checks import spell_shape
from innet.gen.jsonio import load_json

__all__ = ["JSON_FORMAT", "JSON_VERSION", "MAX_BLOCKS", "MAX_RANKS", "Entry", "Schedule",
           "spell_shape"]

#: Format name and version written by :meth:`Schedule.to_json`.
JSON_FORMAT = "innet-swing-schedule"
JSON_VERSION = 1

#: The largest number of ranks a schedule may have.
MAX_RANKS = 1 << 20

#: The largest number of blocks a collective's vector may be cut into.
MAX_BLOCKS = 1 << 31


@dataclass(frozen=True)
class Entry:
    """One step-table entry: what a rank does for one collective at one step.

    Attributes
    ----------
    collective, step : int
        Where the entry sits in the schedule.
    send_peer, recv_peer : int or None
        The rank the blocks go to and come from; ``None`` when the rank does not send (receive).
    send, recv : tuple of (int, int)
        Half-open block ranges ``(lo, hi)`` of the collective's share; empty (``lo == hi``)
        exactly when the peer is ``None``.
    reduce : bool
        ``True``: combine the received blocks into the own copy; ``False``: overwrite it.
    """

    collective: int
    step: int
    send_peer: int | None
    recv_peer: int | None
    send: tuple[int, int]
    recv: tuple[int, int]
    reduce: bool

    @property
    def idle(self) -> bool:
        """Whether the entry neither sends nor receives."""
        return self.send_peer is None and self.recv_peer is None


def _int_array(name: str, values, ndim: int) -> np.ndarray:
    if isinstance(values, np.ndarray):
        array = values
    else:
        try:
            array = np.array(values, dtype=object)
            array = np.where(np.equal(array, None), -1, array).astype(np.int64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be an array of integers") from None
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an array of integers, not {array.dtype}")
    if array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, not {array.ndim}")
    return np.ascontiguousarray(array, dtype=np.int32)


def _where(c: int, s: int) -> str:
    return f"Collective {c}, step {s}"


class Schedule:
    """An allreduce schedule over ``ranks`` ranks (see the module documentation).

    Parameters
    ----------
    algorithm : str
        The algorithm's name (``"swing-b"``, ``"ring"``, ...), for reports.
    shape : sequence of int
        The torus shape the ranks are laid out on (row-major; ``(p,)`` for a ring of ``p``).
        Rank ``r`` runs on node ``r``.
    blocks : sequence of int
        Number of blocks each collective's share is split into (one entry per collective).
    send_peer, recv_peer : array_like of int, shape (collectives, steps, ranks)
        Peers; ``-1`` or ``None`` for none.
    send, recv : array_like of int, shape (collectives, steps, ranks, 2)
        Half-open block ranges.
    reduce : array_like of bool, shape (collectives, steps)
        Whether the step of the collective reduces (``True``) or copies (``False``).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If the arrays disagree in shape, a peer or range is out of bounds, or a send is not
        matched by the peer's receive of the same blocks.
    """

    __slots__ = ("_algorithm", "_blocks", "_kept", "_recv", "_recv_peer", "_reduce", "_send",
                 "_send_peer", "_shape")

    def __init__(self, algorithm: str, shape: Sequence[int], blocks: Sequence[int],
                 send_peer, recv_peer, send, recv, reduce) -> None:
        if not isinstance(algorithm, str):
            raise TypeError(f"Algorithm must be a string, not {algorithm!r}")
        shape = tuple(shape)
        if not shape or not all(isinstance(d, int | np.integer) and d >= 1 for d in shape):
            raise ValueError(f"Shape must be a non-empty sequence of positive integers, "
                             f"not {shape!r:.60}")
        shape = tuple(int(d) for d in shape)
        ranks = math.prod(shape)
        if ranks > MAX_RANKS:
            raise ValueError(f"Shape {spell_shape(shape)} has {spell_shape((ranks,))} ranks, "
                             f"more than the {MAX_RANKS} supported")
        send_peer = _int_array("send_peer", send_peer, 3)
        recv_peer = _int_array("recv_peer", recv_peer, 3)
        send = _int_array("send", send, 4)
        recv = _int_array("recv", recv, 4)
        reduce = np.asarray(reduce)
        if reduce.dtype != np.bool_:
            raise TypeError(f"reduce must be an array of booleans, not {reduce.dtype}")
        collectives, steps = send_peer.shape[:2]
        expected = (collectives, steps, ranks)
        for name, array in (("send_peer", send_peer), ("recv_peer", recv_peer)):
            if array.shape != expected:
                raise ValueError(f"{name} must have shape {expected}, not {array.shape}")
        for name, array in (("send", send), ("recv", recv)):
            if array.shape != (*expected, 2):
                raise ValueError(f"{name} must have shape {(*expected, 2)}, not {array.shape}")
        if reduce.shape != (collectives, steps):
            raise ValueError(f"reduce must have shape {(collectives, steps)}, "
                             f"not {reduce.shape}")
        blocks = tuple(blocks)
        if len(blocks) != collectives:
            raise ValueError(f"blocks must have one count per collective ({collectives}), "
                             f"not {len(blocks)}")
        if not all(isinstance(b, int | np.integer) and 1 <= b <= MAX_BLOCKS for b in blocks):
            raise ValueError(f"Block counts must be integers from 1 to {MAX_BLOCKS}, not "
                             f"{blocks!r:.60}")
        self._algorithm = algorithm
        self._shape = shape
        self._blocks = tuple(int(b) for b in blocks)
        self._send_peer = send_peer
        self._recv_peer = recv_peer
        self._send = send
        self._recv = recv
        self._reduce = np.ascontiguousarray(reduce)
        self._kept: dict[int, np.ndarray] = {}  # vector length -> positions in the tables
        for array in (send_peer, recv_peer, send, recv, self._reduce):
            array.flags.writeable = False
        self._check()

    # -- validation ---------------------------------------------------------------------------

    def _check(self) -> None:
        ranks = self.ranks
        limit = np.asarray(self._blocks, dtype=np.int64)[:, None, None]
        me = np.arange(ranks)
        for name, peer, rng in (("send", self._send_peer, self._send),
                                ("recv", self._recv_peer, self._recv)):
            bad = (peer < -1) | (peer >= ranks) | (peer == me)
            if bad.any():
                c, s, r = (int(i) for i in np.argwhere(bad)[0])
                raise ValueError(f"{_where(c, s)}: rank {r} has {name} peer {int(peer[c, s, r])}"
                                 f", not a rank other than itself in 0..{ranks - 1}")
            lo, hi = rng[..., 0], rng[..., 1]
            bad = (lo < 0) | (hi < lo) | (hi > limit)
            if bad.any():
                c, s, r = (int(i) for i in np.argwhere(bad)[0])
                raise ValueError(f"{_where(c, s)}: rank {r} has {name} range "
                                 f"{tuple(int(v) for v in rng[c, s, r])}, not within "
                                 f"0..{self._blocks[c]}")
            bad = (peer == -1) != (lo == hi)
            if bad.any():
                c, s, r = (int(i) for i in np.argwhere(bad)[0])
                what = "has no peer" if peer[c, s, r] == -1 else "has an empty range"
                raise ValueError(f"{_where(c, s)}: rank {r}'s {name} {what}; a range is empty "
                                 f"exactly when there is no peer")
        # Every send is the peer's receive of the same blocks, and vice versa.
        count, steps = self._send_peer.shape[:2]
        base = (np.arange(count * steps, dtype=np.int64) * ranks).reshape(count, steps, 1)
        for (a_name, a_peer, a_rng), (b_name, b_peer, b_rng) in (
                (("sends", self._send_peer, self._send),
                 ("receives", self._recv_peer, self._recv)),
                (("receives", self._recv_peer, self._recv),
                 ("sends", self._send_peer, self._send))):
            has = a_peer >= 0
            flat = np.where(has, a_peer, 0) + base
            back = b_peer.reshape(-1)[flat]
            theirs = b_rng.reshape(-1, 2)[flat]
            bad = has & ((back != me) | np.any(theirs != a_rng, axis=-1))
            if bad.any():
                ci, si, ri = (int(i) for i in np.argwhere(bad)[0])
                qi = int(a_peer[ci, si, ri])
                other = int(b_peer[ci, si, qi])
                blocks = tuple(int(v) for v in a_rng[ci, si, ri])
                what = "nothing" if other == -1 else (
                    f"blocks {tuple(int(v) for v in b_rng[ci, si, qi])} "
                    f"{'to' if b_name == 'sends' else 'from'} rank {other}")
                raise ValueError(f"{_where(ci, si)}: rank {ri} {a_name} blocks {blocks} "
                                 f"{'to' if a_name == 'sends' else 'from'} rank {qi}, but rank "
                                 f"{qi} {b_name} {what}")

    # -- size ---------------------------------------------------------------------------------

    @property
    def algorithm(self) -> str:
        """The algorithm's name."""
        return self._algorithm

    @property
    def shape(self) -> tuple[int, ...]:
        """The torus shape the ranks are laid out on, row-major."""
        return self._shape

    @property
    def ranks(self) -> int:
        """Number of ranks (the product of :attr:`shape`)."""
        return int(np.prod(self._shape))

    @property
    def collectives(self) -> int:
        """Number of concurrent collectives, each on its own share of the vector."""
        return int(self._send_peer.shape[0])

    @property
    def steps(self) -> int:
        """Number of steps (every collective has the same number; idle entries pad)."""
        return int(self._send_peer.shape[1])

    @property
    def blocks(self) -> tuple[int, ...]:
        """Number of blocks of each collective's share."""
        return self._blocks

    # -- entries ------------------------------------------------------------------------------

    def _index(self, collective: int, step: int, rank: int) -> None:
        for name, value, top in (("Collective", collective, self.collectives),
                                 ("Step", step, self.steps), ("Rank", rank, self.ranks)):
            if not isinstance(value, int | np.integer) or isinstance(value, bool):
                raise TypeError(f"{name} must be an integer, not {value!r}")
            if not 0 <= value < top:
                raise ValueError(f"{name} must be in 0..{top - 1}, not {value}")

    def entry(self, collective: int, step: int, rank: int) -> Entry:
        """The entry of ``rank`` for ``collective`` at ``step``."""
        self._index(collective, step, rank)
        c, s, r = int(collective), int(step), int(rank)
        send_peer = int(self._send_peer[c, s, r])
        recv_peer = int(self._recv_peer[c, s, r])
        return Entry(collective=c, step=s,
                     send_peer=None if send_peer < 0 else send_peer,
                     recv_peer=None if recv_peer < 0 else recv_peer,
                     send=(int(self._send[c, s, r, 0]), int(self._send[c, s, r, 1])),
                     recv=(int(self._recv[c, s, r, 0]), int(self._recv[c, s, r, 1])),
                     reduce=bool(self._reduce[c, s]))

    def table(self, rank: int, elements: int | None = None) -> tuple[Entry, ...]:
        """The step table of ``rank``: its entries in execution order (step-major).

        Without ``elements`` the table has ``steps * collectives`` entries, idle ones included,
        ordered by step and then by collective. With ``elements`` (the vector length an image
        runs), the entries of a step and collective at which no rank moves an element
        (:meth:`moving`) are left out of every rank's table alike, so that the tables stay
        aligned entry by entry: a collective whose share of a short vector is empty (the plain
        collective of a multiport schedule for one element) costs nothing, and its empty
        entries do not stand between the endpoint's entries that move data (an endpoint sends
        the clear-to-send of only its next entry ahead).
        """
        self._index(0, 0, rank)
        kept = None
        if elements is not None:
            n = self._check_n(elements)
            if n not in self._kept:  # every rank's table of a length: computed once
                self._kept[n] = self.moving(n).any(axis=2)
            kept = self._kept[n]
        return tuple(self.entry(c, s, rank)
                     for s in range(self.steps) for c in range(self.collectives)
                     if kept is None or kept[c, s])

    def moving(self, elements: int | None = None) -> np.ndarray:
        """Whether each entry ``(collective, step, rank)`` moves data: it sends or receives a
        block range that holds elements of a vector of ``elements`` (:meth:`elements`; by
        default, a nonempty block range).

        Returns
        -------
        numpy.ndarray of bool, shape (collectives, steps, ranks)
        """
        ranges = (self._send, self._recv)
        if elements is None:
            busy = [r[..., 1] > r[..., 0] for r in ranges]
        else:
            n = self._check_n(elements)
            count = self.collectives
            busy = [np.zeros(r.shape[:3], dtype=bool) for r in ranges]
            for c, blocks in enumerate(self._blocks):
                size = (c + 1) * n // count - c * n // count  # its share, as share()
                first = np.arange(blocks + 1) * size // blocks  # each block's first element
                for held, r in zip(busy, ranges, strict=True):
                    held[c] = first[r[c, ..., 1]] > first[r[c, ..., 0]]
        return busy[0] | busy[1]

    def __iter__(self) -> Iterator[Entry]:
        """Every entry, rank by rank, each rank's in execution order."""
        for r in range(self.ranks):
            yield from self.table(r)

    def peers(self, collective: int) -> list[list[int | None]]:
        """``peers(c)[s][r]``: the rank ``r`` sends to at step ``s`` of collective ``c``."""
        self._index(collective, 0, 0)
        return [[None if q < 0 else q for q in row]
                for row in self._send_peer[int(collective)].tolist()]

    def recv_peers(self, collective: int) -> list[list[int | None]]:
        """``recv_peers(c)[s][r]``: the rank ``r`` receives from at step ``s``."""
        self._index(collective, 0, 0)
        return [[None if q < 0 else q for q in row]
                for row in self._recv_peer[int(collective)].tolist()]

    # -- blocks and elements ------------------------------------------------------------------

    @staticmethod
    def _check_n(n: int) -> int:
        if not isinstance(n, int | np.integer) or isinstance(n, bool):
            raise TypeError(f"Vector length must be an integer, not {n!r}")
        if n < 0:
            raise ValueError(f"Vector length must be non-negative, not {n}")
        return int(n)

    def share(self, collective: int, n: int) -> tuple[int, int]:
        """Element range ``(lo, hi)`` of collective ``c``'s share of an ``n``-element vector."""
        self._index(collective, 0, 0)
        n = self._check_n(n)
        c, count = int(collective), self.collectives
        return (c * n // count, (c + 1) * n // count)

    def elements(self, collective: int, blocks: tuple[int, int], n: int) -> tuple[int, int]:
        """Element range ``(lo, hi)`` of the block range ``blocks`` of collective ``c``.

        Blocks are balanced within the share; empty block ranges map to empty element ranges.
        """
        lo, hi = self.share(collective, n)
        total = self._blocks[int(collective)]
        b0, b1 = blocks
        if not (0 <= b0 <= b1 <= total):
            raise ValueError(f"Block range must lie within 0..{total}, not {tuple(blocks)}")
        size = hi - lo
        return (lo + b0 * size // total, lo + b1 * size // total)

    # -- summaries ----------------------------------------------------------------------------

    def arrays(self) -> dict[str, np.ndarray]:
        """Read-only numpy views of the schedule, for vectorised consumers.

        Keys: ``send_peer``, ``recv_peer`` (``-1`` for none; shape ``(C, S, P)``), ``send``,
        ``recv`` (shape ``(C, S, P, 2)``) and ``reduce`` (shape ``(C, S)``).
        """
        return {"send_peer": self._send_peer, "recv_peer": self._recv_peer,
                "send": self._send, "recv": self._recv, "reduce": self._reduce}

    def blocks_sent(self) -> list[list[int]]:
        """``blocks_sent()[c][r]``: number of blocks rank ``r`` sends in collective ``c``."""
        sizes = self._send[..., 1] - self._send[..., 0]
        return sizes.sum(axis=1).tolist()

    def fraction_sent(self) -> list[float]:
        """Per rank, the fraction of the vector it sends (blocks weighted by share).

        For a vector of ``n`` elements, rank ``r`` sends about ``fraction_sent()[r] * n`` of
        them (exactly, when ``n`` is a multiple of every collective's block count times the
        number of collectives).
        """
        sizes = (self._send[..., 1] - self._send[..., 0]).sum(axis=1)
        weight = 1.0 / (np.asarray(self._blocks, dtype=np.float64) * self.collectives)
        return (sizes * weight[:, None]).sum(axis=0).tolist()

    # -- JSON ---------------------------------------------------------------------------------

    def to_json(self) -> str:
        """The whole schedule as compact, byte-stable JSON (:meth:`from_json` reads it back).

        ``{"format": "innet-swing-schedule", "version": 1, "algorithm", "shape", "collectives":
        [{"blocks", "reduce": [per step], "send_peer": [per step: per rank, -1 for none],
        "recv_peer", "send": [per step: per rank [lo, hi]], "recv"}]}``.
        """
        collectives = []
        for c in range(self.collectives):
            collectives.append({
                "blocks": self._blocks[c], "reduce": self._reduce[c].tolist(),
                "send_peer": self._send_peer[c].tolist(),
                "recv_peer": self._recv_peer[c].tolist(),
                "send": self._send[c].tolist(), "recv": self._recv[c].tolist()})
        return json.dumps({"format": JSON_FORMAT, "version": JSON_VERSION,
                           "algorithm": self._algorithm, "shape": list(self._shape),
                           "collectives": collectives}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Schedule:
        """Read :meth:`to_json` output back, checking everything the constructor checks.

        Raises
        ------
        ValueError
            If the text is not a schedule of this format and version, or is not valid.
        """
        try:
            data = load_json(text)
        except ValueError as error:
            raise ValueError(f"Schedule JSON does not parse: {error}") from None
        if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
            raise ValueError(f"Schedule JSON must have format {JSON_FORMAT!r}")
        if data.get("version") != JSON_VERSION:
            raise ValueError(f"Schedule JSON version must be {JSON_VERSION}, not "
                             f"{data.get('version')!r}")
        try:
            collectives = data["collectives"]
            if not collectives:
                raise ValueError("Schedule JSON must have at least one collective")
            arrays = {}
            for key, dtype in (("send_peer", np.int64), ("recv_peer", np.int64),
                               ("send", np.int64), ("recv", np.int64), ("reduce", bool)):
                try:
                    raw = np.asarray([col[key] for col in collectives], dtype=object)
                    kind = bool if dtype is bool else int
                    if raw.dtype != object or not all(
                            isinstance(x, kind) and (kind is bool or not isinstance(x, bool))
                            for x in raw.flat):
                        raise ValueError
                    arrays[key] = raw.astype(dtype)
                except (ValueError, OverflowError):
                    raise ValueError(f"Schedule JSON field {key!r} is not a rectangular array "
                                     f"of {np.dtype(dtype).name}") from None
            return cls(data["algorithm"], data["shape"], [col["blocks"] for col in collectives],
                       **arrays)
        except (KeyError, TypeError) as error:
            raise ValueError(f"Schedule JSON is missing or mistypes a field: {error}") from None

    def __repr__(self) -> str:
        return (f"Schedule({self._algorithm!r}, shape={spell_shape(self._shape)}, "
                f"collectives={self.collectives}, steps={self.steps}, "
                f"blocks={list(self._blocks)})")
