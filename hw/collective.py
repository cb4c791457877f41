"""The collective path of a switch: the request flits of the collective VCs, and their results.

This is the boundary between the switch fabric and the collective path. The switch hands
this block every request flit as it arrives (the block keeps the request buffers) and the
per-id configuration; the block offers the switch one stream of collective flits, each with
the output ports it goes to. The switch sends that stream through its crossbar as one more
input, with priority over p2p at every output (PIUMA, "Collective Virtual Channel"), as a
fork: a flit leaves on each of its target ports as soon as that port takes it, and the stream
moves on when every target has. Response flits never enter the block: the switch multicasts
them from its inputs through the same crossbar, by ``resp_out`` of their id.

Two blocks keep this contract (the ``collective`` argument of
:class:`innet.hw.switch.SwitchCore` chooses one):

- :class:`innet.hw.ceng.CollectiveEngine`, the switch's default: waits for a flit of an id on
  every port of ``req_in``, takes one of each, reduces them with ``hw.alu`` through a pipelined
  tree in a fixed port order and offers one flit (PIUMA, "Collective Engine").
- :class:`CollectivePath`, the pass-through: it offers each request flit (its payload and
  index) toward the root, and at the root as a response to ``resp_out`` (PIUMA,
  "Request-response Mechanism"); no reduction. Kept for fabric tests and as the reference of
  the routing part.

Interface contract (for any replacement)
----------------------------------------
- ``req[p]`` (valid, payload) is the request flit arriving on input port ``p`` this cycle
  (``kind == REQ``, ``cid`` below ``collective_ids``; no ready). The block keeps the request
  buffers: ``depth`` flits per (id, port), the credits the upstream sender holds, and
  ``req_pop[c]`` bit ``p`` pulses once for every flit of id ``c`` from port ``p``, when the
  block has room for another (when it takes the flit from the buffer, or discards it); the
  switch returns that credit upstream. A flit that finds its (id, port) buffer
  full is not kept and ``req_refused`` pulses (the sender broke the credit protocol).
- ``config[c]`` holds the per-id registers (:func:`config_layout`); a register write takes
  effect from the next cycle. An enabled id's registers do not change while it is ``busy``
  (:class:`innet.hw.switch.Switch` refuses those writes): the engine's request buffers count
  their credits by the contributing ports, and changed under flits they hold, they can return
  a credit twice or never.
- ``credit_req[c]`` bit ``o``: output ``o`` can take one more request flit of id ``c`` than
  the switch already holds for it; ``credit_resp`` bit ``o``: the same for the response VC.
- ``result`` (:func:`result_signature`) is the block's stream of flits: ``valid``, the flit
  (``payload``; a request toward the root, or at the root a response) and ``targets``, its
  output ports (``req_out`` decoded, or ``resp_out`` at the root; none if the id is not
  enabled: the switch then discards the flit and flags ``coll_drop``). The switch raises
  ``ready`` in a cycle it takes the flit (into a register of its own, from which it forks);
  ``valid`` must not depend on ``ready``. Offer a flit only when every target holds a credit
  of its VC (``credit_req``, ``credit_resp``): then a request flit the switch takes leaves
  without waiting, and a result of one id never holds up another's (a response may wait for
  the response VC's credits, which the switch's responses share). The switch sends a flit
  taken in cycle ``t`` on its first target in cycle ``t + HOP_CYCLES`` at the earliest
  (:data:`innet.hw.switch.HOP_CYCLES`, as a flit arriving on an input link in cycle ``t``),
  one copy per target, each on a credit of the flit's VC (:meth:`FlitParams.vc`).
- ``dropped``: pulses when the block discards a flit that cannot be reduced or forwarded (a
  stray flit of an id that is not enabled, or does not contribute on its port).
- ``mismatch``: pulses when request flits at the heads of one id carry different element
  indices and the oldest of them are discarded to bring the streams back in step;
  ``unsupported``: pulses when an element is discarded because its id's operation is not
  defined on its data type. Always 0 in the pass-through.
- ``abort[c]``: while high, every request flit of id ``c`` that reaches the block and every
  result of the id it holds is discarded without a flag, and the id's watchdog is cleared; the
  way to drain an id that can no longer complete (the switch discards the id's responses
  likewise).
- ``busy[c]``: a flit of id ``c`` is in the block, in its request buffers or among its results
  (registered; with the switch's own response buffers, the configuration interlock of
  :class:`innet.hw.switch.Switch`).
- ``timeout``: cycles a reducing id may wait with some but not all of its contributors present
  before its watchdog fires (0: never). ``stalled`` pulses when a watchdog fires;
  ``timed_out[c]`` stays high from then until ``abort[c]``, and ``missing[c]`` holds the
  contributing ports that were missing when it fired. Always 0 in the pass-through.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.regmap.switch import MAX_RADIX
from innet.hw.arbiter import RoundRobin, any_of, encode_onehot, onehot_mux
from innet.hw.buffer import Buffer
from innet.hw.credit import CREDIT_ROUND_TRIP, MAX_DEPTH
from innet.hw.flit import FlitParams, Kind, bits_for

__all__ = ["PASS_CYCLES", "QUEUE_DEPTH", "TIMEOUT_BITS", "CollectivePath", "config_layout",
           "path_members", "result_signature", "send_signature", "targets_of"]

#: Bits of the watchdog's ``timeout`` (cycles; the ``coll_timeout`` register).
TIMEOUT_BITS = 16

#: Cycles from a request flit's arrival on the pass-through's ``req`` to the earliest cycle it
#: is on ``result``: written into its buffer, issued, read into its id's queue
#: (:class:`CollectivePath`).
PASS_CYCLES = 3

#: Flits per id between the pass-through's issue and its result stream (the read stage and the
#: id's queue): one id alone is issued every cycle while its flits leave as they come.
QUEUE_DEPTH = 3


def path_members(params: FlitParams, radix: int) -> dict:
    """The signature members of a collective path (the contract above), for ``super().__init__``
    of any block that keeps it."""
    ids, ports = params.collective_ids, radix + 1
    return {
        "req": In(send_signature(params)).array(ports),
        "req_pop": Out(ports).array(ids),
        "req_refused": Out(1),
        "config": In(config_layout(radix)).array(ids),
        "credit_req": In(ports).array(ids),
        "credit_resp": In(ports),
        "result": Out(result_signature(params, ports)),
        "dropped": Out(1),
        "mismatch": Out(1),
        "unsupported": Out(1),
        "abort": In(ids),
        "busy": Out(ids),
        "timeout": In(TIMEOUT_BITS),
        "stalled": Out(1),
        "timed_out": Out(ids),
        "missing": Out(ports).array(ids),
    }


def config_layout(radix: int) -> data.StructLayout:
    """Per-collective-id configuration as the switch's collective path sees it.

    The fields mirror the ``coll[c]`` registers of :func:`innet.gen.regmap.switch_map` (port
    masks have bit ``i`` for network port ``i`` and bit ``radix`` for the local port; ports are
    numbered ``0 .. radix``, ``radix`` being local):

    ``enable`` (1)
        The id is configured on this switch; flits of a disabled id are discarded.
    ``op`` (4), ``dtype`` (2)
        :class:`innet.gen.ops.Op` and :class:`innet.gen.ops.DType` codes for the reduction.
    ``req_in`` (radix + 1)
        Ports that contribute request flits (used by the reduction; the pass-through forwards
        requests from any port).
    ``req_out`` (bits for radix + 1)
        Port toward the root; ignored at the root.
    ``root`` (1)
        This switch is the root: requests become responses multicast to ``resp_out``.
    ``resp_in`` (bits for radix + 1)
        Port responses arrive on (the pass-through multicasts responses from any port).
    ``resp_out`` (radix + 1)
        Ports responses are multicast to (the local port included where the result is
        delivered).
    """
    ports = radix + 1
    return data.StructLayout({
        "enable": 1,
        "op": 4,
        "dtype": 2,
        "req_in": ports,
        "req_out": bits_for(ports),
        "root": 1,
        "resp_in": bits_for(ports),
        "resp_out": ports,
    })


def send_signature(params: FlitParams) -> wiring.Signature:
    """A flit of this cycle, ``valid`` and ``payload`` with no ready: a request flit arriving
    at the collective path."""
    return wiring.Signature({"valid": Out(1), "payload": Out(params.layout)})


def result_signature(params: FlitParams, ports: int) -> wiring.Signature:
    """The collective path's stream of flits: ``valid``, ``payload`` (a flit), ``targets``
    (its output ports, bit ``o`` for port ``o``) and ``ready`` (taken this cycle)."""
    return wiring.Signature({"valid": Out(1), "payload": Out(params.layout),
                             "targets": Out(ports), "ready": In(1)})


def targets_of(cfg, ports: int):
    """The output ports a flit of an id with configuration ``cfg`` (:func:`config_layout`)
    leaves on from its collective path: ``resp_out`` at the root, else ``req_out`` as a port
    mask; none while the id is not enabled."""
    return Mux(cfg.enable, Mux(cfg.root, cfg.resp_out, _decode(cfg.req_out, ports)), 0)


def _decode(value, width: int):
    """One-hot of ``value`` in ``width`` bits (zero when ``value >= width``)."""
    return Cat(*(value == i for i in range(width)))


class CollectivePath(wiring.Component):
    """Pass-through collective path (no reduction): forwards each request flit by the
    registers.

    Every request flit is offered on its own (PIUMA, "Request-response Mechanism"): toward
    ``config[c].req_out``, or at the root (``config[c].root``) as a response flit
    (``kind = RESP``) to ``config[c].resp_out``; a flit is offered when every target holds a
    credit for it. It keeps a flit's payload and index only: the stream carries a collective
    flit's payload, index, id and kind, its p2p fields are zero (the link protocol).

    Built like the collective engine's front end, so that no path runs from a request buffer's
    read into the result stream:

    1. buffers: the request flits of every id arriving on an input port go into one block RAM
       per port, partitioned by id (``depth`` flits each, the credits of the request VCs); per
       (id, port) registers count the flits held;
    2. issue: one (id, port) a cycle holding a flit, from the registered counts, while the
       id's queue has room: round-robin over the ids, and within each id over its ports (so no
       id and no port starves); the flit leaves its buffer (its credit goes back) and the
       block RAM's read register loads it (every port's at the same address);
    3. read: the issued port's read register goes into the id's queue (:data:`QUEUE_DEPTH`
       flits);
    4. offer: the ids whose queue head can leave (every target holds a credit) share the
       result stream round-robin, one flit a cycle, so a flit waiting for credits never holds
       up another id's.

    Latency: a request flit arriving on ``req`` in cycle ``t`` is on ``result`` in cycle
    ``t + PASS_CYCLES`` (:data:`PASS_CYCLES` = 3) at the earliest. Throughput: one flit a
    cycle, for one id alone or shared by several.

    Parameters
    ----------
    params : FlitParams
        The flit format (collective ids, widths).
    radix : int
        Network ports of the switch (the local port is ``radix``).
    depth : int
        Request flits per (id, port): the credits of the request VCs (default
        :data:`~innet.hw.credit.CREDIT_ROUND_TRIP`).

    Members
    -------
    See the module docstring for the contract; shapes:
    ``req`` In(send_signature).array(radix + 1), ``req_pop`` Out(radix + 1).array(collective_ids),
    ``req_refused`` Out(1), ``config`` In(config_layout(radix)).array(collective_ids),
    ``credit_req`` In(radix + 1).array(collective_ids), ``credit_resp`` In(radix + 1),
    ``result`` Out(result_signature(params, radix + 1)), ``dropped`` Out(1), ``mismatch``
    Out(1), ``unsupported`` Out(1) (all three always 0 here), ``abort`` In(collective_ids),
    ``busy`` Out(collective_ids), ``timeout`` In(TIMEOUT_BITS) (unused here), ``stalled``
    Out(1), ``timed_out`` Out(collective_ids), ``missing`` Out(radix + 1).array(collective_ids)
    (all three always 0 here).
    """

    def __init__(self, params: FlitParams, radix: int, depth: int = CREDIT_ROUND_TRIP) -> None:
        if not isinstance(params, FlitParams):
            raise TypeError(f"Params must be a FlitParams, not {params!r}")
        check_int("Radix", radix, low=1, high=MAX_RADIX)
        check_int("Request buffer depth", depth, low=1, high=MAX_DEPTH)
        self._params = params
        self._radix = radix
        self._depth = depth
        super().__init__(path_members(params, radix))

    @property
    def params(self) -> FlitParams:
        return self._params

    @property
    def radix(self) -> int:
        return self._radix

    @property
    def depth(self) -> int:
        return self._depth

    def elaborate(self, platform):
        m = Module()
        p = self._params
        ids, ports = p.collective_ids, self._radix + 1
        entry = data.StructLayout({"payload": p.payload_width, "index": p.index_width})
        abort = self.abort

        # ---- Buffers: one block RAM per input port, partitioned by id -----------------------
        # Per (id, port): the write place, the oldest flit (``rptr``) and the flits held.
        pw, ib = bits_for(self._depth), (ids - 1).bit_length()

        def per_port(shape, label):
            return [[Signal(shape, name=f"req{c}_p{q}_{label}") for q in range(ports)]
                    for c in range(ids)]

        wptr, rptr = per_port(pw, "wptr"), per_port(pw, "rptr")
        count = per_port(range(self._depth + 1), "count")
        accept, issue, drain = per_port(1, "accept"), per_port(1, "issue"), per_port(1, "drain")
        refused, reads = [], []
        for q in range(ports):
            arriving = self.req[q]
            # Read by a synchronous port (stage A, below). An entry is written an edge before
            # its flit can be issued at the earliest, and not written again before its credit
            # has gone back and come back as a flit, so a read never meets a write to it.
            memory = Memory(shape=entry, depth=1 << (pw + ib), init=[],
                            attrs={"ram_style": "block", "no_rw_check": 1})
            m.submodules[f"req_mem{q}"] = memory
            write = memory.write_port()
            reads.append(memory.read_port(domain="sync"))
            hits = [arriving.valid & (arriving.payload.cid == c) for c in range(ids)]
            for c in range(ids):
                m.d.comb += accept[c][q].eq(hits[c] & (count[c][q] != self._depth))
                refused.append(hits[c] & (count[c][q] == self._depth))
            m.d.comb += [
                write.en.eq(any_of(accept[c][q] for c in range(ids))),
                write.addr.eq(Cat(onehot_mux(hits, [wptr[c][q] for c in range(ids)]),
                                  arriving.payload.cid[:ib])),
                write.data.payload.eq(arriving.payload.payload),
                write.data.index.eq(arriving.payload.index),
            ]
        m.d.comb += self.req_refused.eq(any_of(refused))

        # ---- Issue: one (id, port) holding a flit, from registered counts --------------------
        # Round-robin over the ids that hold a flit and have room, and within each id over its
        # ports (its round robin moves when the id is granted): a port that keeps a flit
        # waiting while its id has room is issued within ``ids * ports`` issues.
        # ``reserved``: the id's flits issued and not yet taken from its queue (in the read
        # stage or queued), so an issued flit always finds room.
        reserved = [Signal(range(QUEUE_DEPTH + 1), name=f"reserved{c}") for c in range(ids)]
        id_rr = RoundRobin(ids)
        m.submodules.issue_rr = id_rr
        issued_id = id_rr.grant
        for c in range(ids):
            port_rr = RoundRobin(ports)
            m.submodules[f"issue{c}_rr"] = port_rr
            held = Cat(count[c][q] != 0 for q in range(ports))
            m.d.comb += [
                port_rr.requests.eq(held),
                port_rr.take.eq(issued_id[c]),
                id_rr.requests[c].eq(~abort[c] & (reserved[c] != QUEUE_DEPTH) & held.any()),
            ]
            for q in range(ports):
                m.d.comb += issue[c][q].eq(issued_id[c] & port_rr.grant[q])
        m.d.comb += id_rr.take.eq(issued_id.any())
        issued_port = [any_of(issue[c][q] for c in range(ids)) for q in range(ports)]

        # Stage A (registered issue): the id, the port and, in the read registers of the
        # buffers, the flit at the issued address.
        a_cid = Signal(ids, name="a_cid")  # one-hot; zero when nothing was issued
        a_port = Signal(ports, name="a_port")  # one-hot
        address = Signal(pw + ib, name="issue_addr")
        m.d.comb += address.eq(Cat(
            onehot_mux([issue[c][q] for c in range(ids) for q in range(ports)],
                       [rptr[c][q] for c in range(ids) for q in range(ports)]),
            encode_onehot(issued_id)[:ib]))
        m.d.sync += [a_cid.eq(issued_id), a_port.eq(Cat(issued_port))]
        for q in range(ports):
            m.d.comb += reads[q].addr.eq(address)
        read = Signal(entry, name="a_read")
        m.d.comb += read.eq(onehot_mux(a_port, [r.data for r in reads]))

        # ---- Bookkeeping: an issued flit leaves its buffer and its credit goes back; an
        # aborted id's flits are discarded, one a cycle per port.
        for c in range(ids):
            for q in range(ports):
                taken = issue[c][q] | drain[c][q]
                m.d.comb += [drain[c][q].eq(abort[c] & (count[c][q] != 0)),
                             self.req_pop[c][q].eq(taken)]
                m.d.sync += [wptr[c][q].eq(wptr[c][q] + accept[c][q]),
                             rptr[c][q].eq(rptr[c][q] + taken),
                             count[c][q].eq(count[c][q] + accept[c][q] - taken)]

        # ---- Read into the id's queue; the ids with a head that can leave, round-robin ------
        src_valid = [Signal(name=f"src{c}_valid") for c in range(ids)]
        targets = [targets_of(self.config[c], ports) for c in range(ids)]
        heads = []
        rr = RoundRobin(ids)
        m.submodules.result_rr = rr
        for c in range(ids):
            queue = Buffer(entry, QUEUE_DEPTH)
            m.submodules[f"queue{c}"] = queue
            heads.append(queue.r.payload)
            credits = Mux(self.config[c].root, self.credit_resp, self.credit_req[c])
            sent = rr.grant[c] & self.result.ready
            flushed = abort[c] & queue.r.valid
            lost = a_cid[c] & abort[c]  # read for an aborted id: not queued
            m.d.comb += [
                queue.w.valid.eq(a_cid[c] & ~abort[c]),
                queue.w.payload.eq(read),
                queue.r.ready.eq(sent | flushed),
                src_valid[c].eq(queue.r.valid & ~abort[c] & ((targets[c] & ~credits) == 0)),
            ]
            m.d.sync += [
                reserved[c].eq(reserved[c] + issued_id[c] - sent - flushed - lost),
                self.busy[c].eq(any_of(count[c][q] != 0 for q in range(ports))
                                | (reserved[c] != 0)),
            ]

        head = Signal(entry, name="result_head")
        root = onehot_mux(rr.grant, [self.config[c].root for c in range(ids)])
        m.d.comb += [
            rr.requests.eq(Cat(src_valid)),
            rr.take.eq(self.result.ready),
            head.eq(onehot_mux(rr.grant, heads)),
            self.result.valid.eq(rr.grant.any()),
            self.result.payload.kind.eq(Mux(root, Kind.RESP, Kind.REQ)),
            self.result.payload.cid.eq(encode_onehot(rr.grant)),
            self.result.payload.index.eq(head.index),
            self.result.payload.payload.eq(head.payload),
            self.result.targets.eq(onehot_mux(rr.grant, targets)),
        ]
        return m
