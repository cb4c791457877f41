"""The collective engine: the switch's collective path with a pipelined reduction unit.

PIUMA, "Switch Architecture for In-network Computing": the Collective Engine reduces in-flight
request packets of several input ports "in a fixed port order when all required inputs are
available"; request and response packets travel on their own virtual channels ("Collective
Virtual Channel", "Request-response Mechanism"); the root turns the reduced value into a
response that is multicast down the inverse tree ("Broadcast Tree"); several collective ids
each have their own registers ("Multiple In-network Collectives").
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory

from innet.gen.checks import check_int
from innet.gen.ops import Op
from innet.gen.regmap.switch import MAX_RADIX
from innet.hw.alu import LATENCY
from innet.hw.alu.multi import MultiOperandUnit, multi_latency
from innet.hw.arbiter import RoundRobin, any_of, encode_onehot, onehot_mux
from innet.hw.buffer import Buffer, Bypass
from innet.hw.ceng.tree import ReductionTree, levels_for
from innet.hw.collective import TIMEOUT_BITS, path_members
from innet.hw.credit import CREDIT_ROUND_TRIP, MAX_DEPTH
from innet.hw.flit import FlitParams, Kind, bits_for

__all__ = ["ENGINE_PROPERTIES", "FRONT_CYCLES", "CollectiveEngine", "engine_latency",
           "engine_properties"]

#: Cycles of the engine's front end: issue, operand read, index check.
FRONT_CYCLES = 3


def engine_latency(count: int, radix: int, op: Op | int = Op.ADD) -> int:
    """Cycles the engine of a switch of ``radix`` network ports adds to a switch crossing for a
    reduction of ``count`` ports with ``op``: from the last operand on ``req`` to the result
    on ``result``.

    One cycle for the write into the request buffer, :data:`FRONT_CYCLES` = 3 (issue, operand
    read, index check) and the reduction unit's
    :func:`~innet.hw.alu.multi.multi_latency` of ``radix + 1`` leaves, whatever ``count``
    (15, 17 and 19 cycles at radix 4, 8 and 16): 4 when ``count`` is 1 (the flit is forwarded
    without a reduction). ``mul`` (an engine built with multipliers) goes through the pairwise
    tree instead: :data:`innet.hw.alu.LATENCY` = 9 per level, ``ceil(log2(count))`` levels.
    The result stream then crosses the switch like a flit arriving on an input link, so a
    switch is crossed in ``HOP_CYCLES + engine_latency(count, radix)`` cycles
    (:data:`innet.hw.switch.HOP_CYCLES` = 3), counted from the last operand's arrival: 7 for
    one port, 22, 24 and 26 for more at radix 4, 8 and 16.

    Raises
    ------
    TypeError, ValueError
        If ``count`` or ``radix`` is not a positive integer.
    """
    check_int("Operand count", count, low=1)
    check_int("Radix", radix, low=1)
    if count == 1:
        return 1 + FRONT_CYCLES
    if (Op(op) if isinstance(op, int) else Op.parse(op)) == Op.MUL:
        return 1 + FRONT_CYCLES + LATENCY * levels_for(count)
    return 1 + FRONT_CYCLES + multi_latency(radix + 1)


def _popcount(bits) -> object:
    total = Const(0, 1)
    for b in bits:
        total = total + b
    return total


class CollectiveEngine(wiring.Component):
    """The collective path of a switch with in-network reduction (PIUMA's CENG).

    A drop-in replacement of :class:`innet.hw.collective.CollectivePath` (same members and
    contract, see :mod:`innet.hw.collective`; ``SwitchCore(collective=CollectiveEngine)``).

    Behaviour per collective id ``c`` with ``k`` ports in ``config[c].req_in`` (enabled):

    - ``k >= 2``: once every port of ``req_in`` holds a request flit of ``c``, the engine
      consumes one flit of each and reduces their payloads with ``config[c].op`` on
      ``config[c].dtype`` in a :class:`~innet.hw.alu.multi.MultiOperandUnit` with a leaf per
      port (network ports ascending, the local port ``radix`` last), each payload on its
      port's leaf and the id's ``req_in`` as the mask, so no operand is moved on its way (an
      fp32 sum aligned once and rounded once, :func:`innet.gen.ops.sum_fp32`; ``nor`` the
      complement of the OR of all; the other operations associative and commutative: no
      order changes a result) and every reduction takes the unit's latency. ``mul``, in an
      engine built with multipliers, goes through a :class:`ReductionTree` of
      :class:`~innet.hw.alu.ALU` s instead, its operands in port order on its first ``k``
      leaves (``ceil(log2 k)`` ALU latencies). The result is offered as one flit (its element
      index, ``cid = c``) on ``result``: a request to ``req_out``, or at the root a response
      to ``resp_out``, which the switch forks. If the flits' element indices differ (a flit
      was lost or sent twice), nothing is reduced: the flits holding the oldest index are
      discarded and ``mismatch`` pulses, so that a lost flit costs one element and the
      streams are back in step (:meth:`_resync`); an operation the engine does not implement on
      the data type discards the element and pulses ``unsupported``. Never a wrong result.
    - ``k == 1``: no reduction: the flit is forwarded like the pass-through does (a response
      at the root), through the front end but not the reduction unit.
    - requests on ports outside ``req_in`` (or of a disabled id) are discarded and ``dropped``
      pulses.

    Front end
    ---------
    The request flits of every id arriving on an input port are written into one memory per
    port, partitioned by id (``depth`` flits each, the credits of the request VCs): payloads
    and indices in block RAM. Per (id, port) registers count the flits held and the flits not
    yet issued. Three registered stages follow, so no path runs from a buffer read into the
    choice of the next element:

    1. issue: one id whose contributing ports all hold a flit not yet issued, chosen
       round-robin from those registered counts; every port's read address is registered,
       and the index memories are read at it into their read registers;
    2. operand read: every port's payload memory is read at its address into an operand
       register (its read register), and whether the contributing flits' indices agree, with
       the OR of those indices (the element's index when they agree), into registers beside
       them;
    3. check: the contributing flits' indices agree: the flits are consumed and the payloads
       registered on their ports' leaves, the reduction's input (or the forwarded flit's
       payload). If they disagree, the id's flits in flight are issued again later and the
       resynchronisation unit takes the element.

    A flit is consumed only in the check stage, so an element issued speculatively behind one
    whose indices disagree is simply issued again. Each partition has room for
    ``FRONT_CYCLES`` flits beyond ``depth``: up to that many flits held have their credit back
    already, so a flit's credit goes back upstream in the cycle it arrives while its id
    streams (else when a flit is consumed), and the sender's credit loop is a cycle shorter
    than that of a plain buffer (it covers the cycle a result takes in the switch's fork).

    Latency and throughput
    ----------------------
    With credits available, a reduction's flit is on ``result`` :func:`engine_latency` cycles
    after its last operand arrived on ``req`` (the switch's input link). The front end issues
    one element per cycle: the ids with a complete set of flits take turns (round-robin, one
    element each), so one id alone reduces or forwards one element per cycle and several ids
    share that rate (PIUMA, "Multiple In-network Collectives": collectives on different ids
    that overlap on a switch are executed one at a time; here they interleave element by
    element). The ids with a result that can leave share the result stream round-robin, one
    flit per cycle.

    The reduction unit never stalls. Instead every id owns an output queue of ``queue_depth``
    results in block RAM (:class:`~innet.hw.buffer.Buffer`), and an element is issued only
    when its id has room in it for everything the front end and the unit may hold. A result
    is offered on ``result`` only when each of its targets holds a credit for it
    (``credit_req``, ``credit_resp``): a result that cannot leave for lack of credits waits in
    its own id's queue and never holds up another id, so ids cannot deadlock each other
    through the engine. ``queue_depth`` of at least the unit's latency ``+ FRONT_CYCLES + 1``
    keeps one id at one element per cycle (the default; with multipliers, the tree's latency
    at ``k = radix + 1`` if that is longer).

    A watchdog per reducing id (``timeout``, :meth:`_watchdog`) names the contributors missing
    when the id has waited too long; ``abort`` drains an id (its request flits and queued
    results are discarded) and ``busy`` says when it is quiet (see
    :mod:`innet.hw.collective`).

    Configuration (``config``) is registered once more inside the engine: a register write
    applies to flits issued two cycles later. :class:`innet.hw.switch.Switch` refuses writes
    to an enabled id while ``busy``.

    Parameters
    ----------
    params : FlitParams
        The flit format; ``payload_width`` must be 32 (the reduction's width).
    radix : int
        Network ports (the local port is ``radix``).
    depth : int
        Request flits per (id, input port): the credits of the request VCs (default
        :data:`~innet.hw.credit.CREDIT_ROUND_TRIP`).
    mul : bool
        Also build a tree of ``radix`` pairwise ALUs with multipliers for ``mul`` (of every
        data type). Off by default: in-network reductions are sums, minima, maxima and
        bitwise operations; without it ``mul`` is unsupported (``coll_op``).
    queue_depth : int, optional
        Results per id the output queue holds, at least ``FRONT_CYCLES`` (default: the
        reduction's longest latency ``+ FRONT_CYCLES + 1``, see :attr:`reduce_cycles`).

    Members
    -------
    As :class:`~innet.hw.collective.CollectivePath` (``req``, ``req_pop``, ``req_refused``,
    ``config``, ``credit_req``, ``credit_resp``, ``result``, ``dropped``, ``mismatch``,
    ``unsupported``, ``abort``, ``busy``, ``timeout``, ``stalled``, ``timed_out``,
    ``missing``).

    Raises
    ------
    TypeError, ValueError
        On a parameter of the wrong type or out of range.
    """

    def __init__(self, params: FlitParams, radix: int, depth: int = CREDIT_ROUND_TRIP, *,
                 mul: bool = False, queue_depth: int | None = None) -> None:
        if not isinstance(params, FlitParams):
            raise TypeError(f"Params must be a FlitParams, not {params!r}")
        check_int("Radix", radix, low=1, high=MAX_RADIX)
        if params.payload_width != 32:
            raise ValueError(f"The collective engine reduces 32-bit payloads, not "
                             f"{params.payload_width}-bit ones")
        if not isinstance(mul, bool):
            raise TypeError(f"Multiplier option must be a bool, not {mul!r}")
        check_int("Request buffer depth", depth, low=1, high=MAX_DEPTH)
        self._params = params
        self._radix = radix
        self._depth = depth
        self._mul = mul
        if queue_depth is None:
            queue_depth = self.reduce_cycles + FRONT_CYCLES + 1
        check_int("Queue depth", queue_depth, low=FRONT_CYCLES, high=MAX_DEPTH)
        self._queue_depth = queue_depth
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

    @property
    def mul(self) -> bool:
        return self._mul

    @property
    def queue_depth(self) -> int:
        return self._queue_depth

    @property
    def reduce_cycles(self) -> int:
        """Cycles of the longest reduction: the unit's latency, or with multipliers the tree's
        at ``radix + 1`` operands if that is longer."""
        cycles = multi_latency(self._radix + 1)
        if self._mul:
            cycles = max(cycles, LATENCY * levels_for(self._radix + 1))
        return cycles

    def elaborate(self, platform):
        m = Module()
        p = self._params
        ids, ports = p.collective_ids, self._radix + 1
        depth = self._queue_depth

        # ---- Configuration, decoded and registered ------------------------------------------
        decoded = data.StructLayout({
            "contrib": ports,                # req_in of an enabled id
            "count": range(ports + 1),       # ports in contrib
            "tree": 1,                       # count >= 2: reduce
            "forward": 1,                    # count == 1: forward unchanged
            "root": 1,
            "targets": ports,                # where results go (empty: discard)
            "op": 4,
            "dtype": 2,
        })
        cfg = [Signal(decoded, name=f"cfg{c}") for c in range(ids)]
        # sel[c][j]: one-hot port of the j-th contributing port (bits below j are always 0),
        # for the tree of ALUs of an engine with multipliers, which takes its operands on its
        # first leaves; the reduction unit takes them where they are.
        sel = [[Signal(ports, name=f"cfg{c}_sel{j}") for j in range(ports)]
               for c in range(ids)] if self._mul else []
        for c in range(ids):
            reg = self.config[c]
            contrib = Mux(reg.enable, reg.req_in, 0)
            k = _popcount(contrib[q] for q in range(ports))
            decode_out = Cat(*(reg.req_out == q for q in range(ports)))
            m.d.sync += [
                cfg[c].contrib.eq(contrib),
                cfg[c].count.eq(k),
                cfg[c].tree.eq(k >= 2),
                cfg[c].forward.eq(k == 1),
                cfg[c].root.eq(reg.root),
                cfg[c].targets.eq(Mux(reg.enable, Mux(reg.root, reg.resp_out, decode_out), 0)),
                cfg[c].op.eq(reg.op),
                cfg[c].dtype.eq(reg.dtype),
            ]
            if not self._mul:
                continue
            rank = [_popcount(contrib[r] for r in range(q)) for q in range(ports)]
            for j in range(ports):
                m.d.sync += sel[c][j].eq(Cat(*(
                    contrib[q] & (rank[q] == j) if q >= j else Const(0, 1)
                    for q in range(ports))))

        abort = self.abort
        iw = p.index_width
        slots = self._depth
        dropped = []

        # ---- Request buffers: block RAM per input port, partitioned by id -------------------
        # Per (id, port): the write place, the oldest flit held (``rptr``), the next flit to
        # issue (``spec``), flits held (``count``), flits not issued yet (``pend``) and the
        # oldest flits held whose credit has gone back already (``returned``). An issued flit
        # is held until the check stage consumes it, so that an element whose flits disagree
        # can be issued again, but up to FRONT_CYCLES flits held may have their credit back:
        # a flit's credit goes back in the cycle it arrives while a stream flows, so the
        # sender's credit loop is a cycle shorter than a plain buffer's, and a partition holds
        # ``depth`` flits whose credit is out plus the FRONT_CYCLES whose credit is back.
        capacity = slots + FRONT_CYCLES
        pw, ib = bits_for(capacity), (ids - 1).bit_length()
        entry = data.StructLayout({"payload": 32, "index": iw})

        def per_port(shape, label):
            return [[Signal(shape, name=f"req{c}_p{q}_{label}") for q in range(ports)]
                    for c in range(ids)]

        wptr, rptr, spec = per_port(pw, "wptr"), per_port(pw, "rptr"), per_port(pw, "spec")
        count = per_port(range(capacity + 1), "count")
        pend = per_port(range(capacity + 1), "pend")
        returned = per_port(range(FRONT_CYCLES + 1), "returned")
        accept, issue, commit = per_port(1, "accept"), per_port(1, "issue"), per_port(1, "commit")
        squash = per_port(1, "squash")
        # Each port's flits in two block RAMs at the same addresses, read by synchronous ports:
        # the indices at the address the issue computes (so they are in the read register as
        # stage A begins, and the index agreement is computed from them into a register), the
        # payloads at stage A's registered address (their read register is the operand
        # register). An entry is written an edge before its flit can be issued at the
        # earliest, and not written again before the flit is consumed and its credit has
        # gone back and come back as a flit, so a read never meets a write to it.
        refused, index_reads, payload_reads = [], [], []
        for q in range(ports):
            arriving = self.req[q]
            indices = Memory(shape=iw, depth=1 << (pw + ib), init=[],
                             attrs={"ram_style": "block", "no_rw_check": 1})
            payloads = Memory(shape=32, depth=1 << (pw + ib), init=[],
                              attrs={"ram_style": "block", "no_rw_check": 1})
            m.submodules[f"req_index{q}"] = indices
            m.submodules[f"req_payload{q}"] = payloads
            write, write_payload = indices.write_port(), payloads.write_port()
            index_reads.append(indices.read_port(domain="sync"))
            payload_reads.append(payloads.read_port(domain="sync"))
            hits = [arriving.valid & (arriving.payload.cid == c) for c in range(ids)]
            for c in range(ids):
                # The sender holds no credit when the flits it has not been credited for fill
                # the depth.
                owed = count[c][q] - returned[c][q]
                m.d.comb += accept[c][q].eq(hits[c] & (owed != slots))
                refused.append(hits[c] & (owed == slots))
            m.d.comb += [
                write.en.eq(any_of(accept[c][q] for c in range(ids))),
                write.addr.eq(Cat(onehot_mux(hits, [wptr[c][q] for c in range(ids)]),
                                  arriving.payload.cid[:ib])),
                write.data.eq(arriving.payload.index),
                write_payload.en.eq(write.en),
                write_payload.addr.eq(write.addr),
                write_payload.data.eq(arriving.payload.payload),
            ]
        m.d.comb += self.req_refused.eq(any_of(refused))

        # ---- Issue: one id per cycle whose contributors all hold a flit not issued yet ------
        # From registered counts only; round-robin over the ids.
        reserved = [Signal(range(depth + 1), name=f"reserved{c}") for c in range(ids)]
        resyncing = Signal(ids, name="resyncing")  # one-hot: the id the resync unit holds
        issue_rr = RoundRobin(ids)
        m.submodules.issue_rr = issue_rr
        for c in range(ids):
            on = cfg[c].contrib
            ready = Cat(pend[c][q] != 0 for q in range(ports))
            m.d.comb += issue_rr.requests[c].eq(
                (cfg[c].tree | cfg[c].forward) & ((ready & on) == on) & ~abort[c]
                & ~resyncing[c] & (reserved[c] + FRONT_CYCLES <= depth))
        grant = issue_rr.grant
        m.d.comb += issue_rr.take.eq(grant.any())
        for c in range(ids):
            for q in range(ports):
                m.d.comb += issue[c][q].eq(grant[c] & cfg[c].contrib[q])

        # Ids whose flits in flight are discarded this cycle (and issued again later): an
        # element of the id whose heads disagree, an abort, the end of a resynchronisation.
        killed = Signal(ids, name="killed")

        # Stage A (registered issue): the id and every port's read address.
        a_valid = Signal(name="a_valid")
        a_cid = Signal(ids, name="a_cid")  # one-hot
        a_addr = [Signal(pw + ib, name=f"a_addr{q}") for q in range(ports)]
        m.d.sync += [a_valid.eq(grant.any() & ~(grant & killed).any()), a_cid.eq(grant)]
        for q in range(ports):
            address = Cat(onehot_mux(grant, [spec[c][q] for c in range(ids)]),
                          onehot_mux(grant, [Const(c, ib) for c in range(ids)]))
            m.d.sync += a_addr[q].eq(address)
            m.d.comb += [index_reads[q].addr.eq(address), payload_reads[q].addr.eq(a_addr[q])]

        # Stage B (operand registers): every port's flit read at A's address (its payload in
        # the payload memory's read register), and the id's configuration.
        b_valid = Signal(name="b_valid")
        b_cid = Signal(ids, name="b_cid")
        b_flit = [Signal(entry, name=f"b_operand{q}") for q in range(ports)]
        b_index = [Signal(iw, name=f"b_index{q}") for q in range(ports)]
        b_contrib = Signal(ports, name="b_contrib")
        b_tree = Signal(name="b_tree")
        b_sel = [Signal(ports, name=f"b_sel{j}") for j in range(ports)] if self._mul else []
        b_info = Signal(data.StructLayout({"count": range(ports + 1), "op": 4, "dtype": 2}),
                        name="b_info")
        # Whether the contributing flits agree on the element index, computed as they are read
        # (so that the check stage starts from a register); the OR of their indices is then
        # the element's index.
        a_contrib = Signal(ports, name="a_contrib")
        b_agree = Signal(name="b_agree")
        b_common = Signal(iw, name="b_common_index")
        m.d.comb += a_contrib.eq(onehot_mux(a_cid, [cfg[c].contrib for c in range(ids)]))
        every, some = _bounds([index_reads[q].data for q in range(ports)], a_contrib)
        m.d.sync += [
            b_valid.eq(a_valid & ~(a_cid & killed).any()),
            b_cid.eq(a_cid),
            b_contrib.eq(a_contrib),
            b_agree.eq(every == some),
            b_common.eq(some),
            b_tree.eq(onehot_mux(a_cid, [cfg[c].tree for c in range(ids)])),
            b_info.count.eq(onehot_mux(a_cid, [cfg[c].count for c in range(ids)])),
            b_info.op.eq(onehot_mux(a_cid, [cfg[c].op for c in range(ids)])),
            b_info.dtype.eq(onehot_mux(a_cid, [cfg[c].dtype for c in range(ids)])),
        ]
        for q in range(ports):
            m.d.sync += b_index[q].eq(index_reads[q].data)
            if self._mul:
                m.d.sync += b_sel[q].eq(onehot_mux(a_cid, [sel[c][q] for c in range(ids)]))
            m.d.comb += [b_flit[q].index.eq(b_index[q]),
                         b_flit[q].payload.eq(payload_reads[q].data)]

        # Stage C (check): the contributing flits agree on the element index: consumed, their
        # payloads registered where they are (a leaf per port) as the reduction's operands;
        # else nothing is consumed, the id's flits in flight are discarded and the
        # resynchronisation unit finds the oldest index (_resync).
        agree = b_agree
        live = Signal(name="b_live")
        m.d.comb += live.eq(b_valid & ~(b_cid & abort).any())
        consumed = live & agree
        mismatched = Signal(ids, name="mismatched")
        m.d.comb += mismatched.eq(Mux(live & ~agree, b_cid, 0))

        # The id travels one-hot (``cid`` bit c for id c), through the reduction unit too, so
        # that a result's id is one bit of its tag where the result queues and the result
        # stream decide.
        issued = Signal(data.StructLayout({
            "tree": 1, "forward": 1, "cid": ids, "index": iw, "contrib": ports,
            "count": range(ports + 1), "op": 4, "dtype": 2,
        }), name="issue")
        leaves = [Signal(32, name=f"issue_leaf{j}", reset_less=True) for j in range(ports)]
        # k == 1: the one contributing flit's payload, forwarded unchanged.
        forward_payload = Signal(32, name="issue_forward", reset_less=True)
        m.d.sync += [
            issued.tree.eq(consumed & b_tree),
            issued.forward.eq(consumed & ~b_tree),
            issued.cid.eq(b_cid),
            # The flits agree: any contributing flit's index is the element's.
            issued.index.eq(b_common),
            issued.contrib.eq(b_contrib),
            issued.count.eq(b_info.count),
            issued.op.eq(b_info.op),
            issued.dtype.eq(b_info.dtype),
            # (one-hot when forwarding; the register is not used otherwise)
            forward_payload.eq(onehot_mux(b_contrib, [b_flit[q].payload for q in range(ports)])),
        ]
        for q in range(ports):
            m.d.sync += leaves[q].eq(b_flit[q].payload)
        # With multipliers: the tree's operands, in port order on its first leaves.
        tree_leaves = [Signal(32, name=f"issue_tree_leaf{j}", reset_less=True)
                       for j in range(ports)] if self._mul else []
        for j, leaf in enumerate(tree_leaves):
            m.d.sync += leaf.eq(onehot_mux([b_sel[j][q] for q in range(j, ports)],
                                           [b_flit[q].payload for q in range(j, ports)]))

        done, resync_commit = self._resync(m, b_flit, b_contrib, b_cid, live & ~agree,
                                           resyncing)
        m.d.comb += killed.eq(mismatched | abort | Mux(done, resyncing, 0))

        # ---- Buffer bookkeeping: issued or discarded flits return their credits ------------
        for c in range(ids):
            for q in range(ports):
                on = cfg[c].contrib[q]
                used = Signal(name=f"req{c}_p{q}_used")
                m.d.comb += used.eq(consumed & b_cid[c] & b_contrib[q] | resync_commit[c][q])
                # Flits of a port outside req_in (or of a disabled id) are discarded, as are
                # all flits of an aborted id: one per cycle, each returning its credit.
                stray = Signal(name=f"stray{c}_{q}")
                drain = (count[c][q] != 0) & ~used & (~on | abort[c])
                # A credit goes back, one a cycle, for the oldest flit held or arriving whose
                # credit has not, while fewer than FRONT_CYCLES flits whose credit has gone
                # back stay held after this cycle's consumption. A consumed flit's credit has
                # always gone back (with ``returned`` at 0 it goes back as it is consumed).
                owed = (count[c][q] != returned[c][q]) | accept[c][q]
                pop = owed & ((returned[c][q] != FRONT_CYCLES) | commit[c][q])
                m.d.comb += [stray.eq(drain & ~abort[c]),
                             commit[c][q].eq(used | drain),
                             squash[c][q].eq(killed[c] | ~on),
                             self.req_pop[c][q].eq(pop)]
                m.d.sync += returned[c][q].eq(returned[c][q] + pop - commit[c][q])
                dropped.append(stray)
                held_next = count[c][q] + accept[c][q] - commit[c][q]
                oldest_next = rptr[c][q] + commit[c][q]
                m.d.sync += [wptr[c][q].eq(wptr[c][q] + accept[c][q]),
                             rptr[c][q].eq(oldest_next),
                             count[c][q].eq(held_next)]
                with m.If(squash[c][q]):
                    m.d.sync += [spec[c][q].eq(oldest_next), pend[c][q].eq(held_next)]
                with m.Else():
                    m.d.sync += [spec[c][q].eq(spec[c][q] + issue[c][q]),
                                 pend[c][q].eq(pend[c][q] + accept[c][q] - issue[c][q])]

        present = [Signal(ports, name=f"present{c}") for c in range(ids)]
        full = [Signal(name=f"full{c}") for c in range(ids)]
        for c in range(ids):
            m.d.comb += [present[c].eq(Cat(count[c][q] != 0 for q in range(ports))
                                       & cfg[c].contrib),
                         full[c].eq(present[c] == cfg[c].contrib)]
        self._watchdog(m, cfg, present, full)

        # ---- The reduction unit (and with multipliers the tree that multiplies) -------------
        tag_width = ids + iw
        unit = MultiOperandUnit(ports, tag_width=tag_width)
        m.submodules.unit = unit
        # Each exit: (valid, tag, result, unsupported).
        exits = [(unit.o_valid, unit.o_tag, unit.o_result, unit.o_unsupported)]
        blocks = [unit]
        multiplies = Const(0, 1)
        if self._mul:
            tree = ReductionTree(ports, tag_width=tag_width, mul=True)
            m.submodules.tree = tree
            multiplies = issued.op == Op.MUL
            exits += [(o.valid, o.tag, o.result, o.unsupported) for o in tree.o]
            blocks.append(tree)
        for block in blocks:
            m.d.comb += [
                block.i_op.eq(issued.op),
                block.i_dtype.eq(issued.dtype),
                block.i_tag.eq(Cat(issued.cid, issued.index)),
            ]
        m.d.comb += [unit.i_valid.eq(issued.tree & ~multiplies), unit.i_mask.eq(issued.contrib)]
        for q in range(ports):
            m.d.comb += unit.i_leaf[q].eq(leaves[q])
        if self._mul:
            m.d.comb += [tree.i_valid.eq(issued.tree & multiplies),
                         tree.i_count.eq(issued.count)]
            for j in range(ports):
                m.d.comb += tree.i_leaf[j].eq(tree_leaves[j])

        # ---- Results: per id, the reduction's exit (or the forwarded flit) or its queue ----
        result = data.StructLayout({"payload": 32, "index": iw})
        unsupported = []
        src_valid = [Signal(name=f"src{c}_valid") for c in range(ids)]
        src_head = [Signal(result, name=f"src{c}_head") for c in range(ids)]
        src_pop = [Signal(name=f"src{c}_pop") for c in range(ids)]
        rr = RoundRobin(ids)
        m.submodules.result_rr = rr

        for c in range(ids):
            # k == 1: the one contributing flit, forwarded from the check stage's register.
            forwarded = issued.forward & issued.cid[c]
            hits = [valid & tag[c] for valid, tag, _, _ in exits] + [forwarded]
            hit = Signal(name=f"exit{c}")
            bad = Signal(name=f"exit{c}_unsupported")
            out = Signal(result, name=f"exit{c}_result")
            m.d.comb += [
                hit.eq(any_of(hits)),
                bad.eq(any_of(h & e[3] for h, e in zip(hits, exits, strict=False))),
                out.payload.eq(onehot_mux(hits, [e[2] for e in exits] + [forward_payload])),
                out.index.eq(onehot_mux(hits, [e[1][ids:] for e in exits]
                                        + [issued.index])),
            ]
            unsupported.append(bad)
            good = hit & ~bad

            # Every result is written into the queue; one that goes straight out (the queue
            # holds none before it) takes the queue's bypass, so that the write does not wait
            # for the result stream's choice. The queue is a block RAM: it holds a result for
            # every element in the reduction, a few dozen, which LUT RAM would hold at 6 logic
            # cells per 16 entries of 4 bits.
            queue = Buffer(result, depth, ram="block")
            m.submodules[f"queue{c}"] = queue
            queued = Bypass(m, queue, good & ~abort[c], out, name=f"queue{c}", flush=abort[c])
            queued.take(src_pop[c])
            waiting = queued.waiting
            m.d.comb += src_head[c].eq(queued.head)
            # Offered when every target holds a credit, so that a result the switch takes
            # never waits there, holding up the other ids' results behind it.
            credits = Mux(cfg[c].root, self.credit_resp, self.credit_req[c])
            m.d.comb += [
                src_valid[c].eq((waiting | good) & ~abort[c]
                                & ((cfg[c].targets & ~credits) == 0)),
                src_pop[c].eq(rr.grant[c] & self.result.ready),
            ]

            # Output slots in use: elements consumed from the buffers and not yet sent (in the
            # reduction, the forward register or the queue). A cycle adds the element entering
            # and takes away a result leaving the queue (sent, or flushed by an abort) and an
            # arriving result discarded (unsupported, or under abort): the count moves by +1 to
            # -2, chosen among values computed from the register alone, so that the late
            # handshakes only select.
            enter = consumed & b_cid[c]
            leaves = src_pop[c] | (abort[c] & waiting)
            discarded = bad | (abort[c] & good)
            now = reserved[c]
            m.d.sync += reserved[c].eq(Mux(
                enter,
                Mux(leaves & discarded, now - 1, Mux(leaves | discarded, now, now + 1)),
                Mux(leaves & discarded, now - 2, Mux(leaves | discarded, now - 1, now))))
            m.d.sync += self.busy[c].eq(any_of(count[c][q] != 0 for q in range(ports))
                                        | (reserved[c] != 0))

        m.d.comb += self.unsupported.eq(any_of(unsupported))
        m.d.comb += self.dropped.eq(any_of(dropped))

        # ---- The result stream: the ids with a result that can leave, round-robin -----------
        head = Signal(result, name="result_head")
        m.d.comb += [
            rr.requests.eq(Cat(src_valid)),
            rr.take.eq(self.result.ready),
            head.eq(onehot_mux(rr.grant, src_head)),
            self.result.valid.eq(rr.grant.any()),
            self.result.payload.kind.eq(Mux(onehot_mux(rr.grant, [cfg[c].root
                                                                  for c in range(ids)]),
                                            Kind.RESP, Kind.REQ)),
            self.result.payload.cid.eq(encode_onehot(rr.grant)),
            self.result.payload.index.eq(head.index),
            self.result.payload.payload.eq(head.payload),
            self.result.targets.eq(onehot_mux(rr.grant, [cfg[c].targets for c in range(ids)])),
        ]
        return m

    def _resync(self, m: Module, flits, contrib, cid, start, resyncing):
        """Bring an id whose flits disagree on the element index back in step.

        One unit serves every id (a lost or duplicated flit is rare). When the check stage
        finds an element whose contributing flits disagree (``start``) and the unit is free,
        the unit keeps their indices and scans them one port per cycle for the oldest
        (serial-number order, so that indices may wrap), then registers which ports hold it;
        in the next cycle the flits holding it are consumed and ``mismatch`` pulses. A lost
        flit costs the one element it belonged to; a duplicated one costs nothing. While the
        unit holds an id (``resyncing``, one-hot) the id issues nothing; an id that disagrees
        while the unit is busy is issued again later.

        Returns ``done`` (the cycle the oldest flits are consumed) and, per id and port,
        whether its oldest flit is consumed in that cycle.
        """
        p = self._params
        ids, ports, iw = p.collective_ids, self._radix + 1, p.index_width
        active = Signal(name="resync")
        held = Signal(ports, name="resync_contrib")
        step = Signal(range(ports + 2), name="resync_step")
        have = Signal(name="resync_have")
        oldest = Signal(iw, name="resync_oldest")
        index = [Signal(iw, name=f"resync_index{q}") for q in range(ports)]
        holds = Signal(ports, name="resync_holds")  # the ports whose flit holds the oldest
        aborted = (resyncing & self.abort).any()
        done = Signal(name="resync_done")
        m.d.comb += done.eq(active & (step == ports + 1) & ~aborted)
        with m.If(active & ((step == ports + 1) | aborted)):
            m.d.sync += [active.eq(0), resyncing.eq(0)]
        with m.Elif(active):
            m.d.sync += step.eq(step + 1)
            with m.Switch(step):
                for q in range(ports):
                    with m.Case(q):
                        earlier = (index[q] - oldest)[iw - 1]
                        with m.If(held[q] & (~have | earlier)):
                            m.d.sync += [oldest.eq(index[q]), have.eq(1)]
                with m.Case(ports):
                    m.d.sync += holds.eq(Cat(held[q] & (index[q] == oldest)
                                             for q in range(ports)))
        with m.Elif(start):
            m.d.sync += [active.eq(1), resyncing.eq(cid), held.eq(contrib), step.eq(0),
                         have.eq(0)]
            m.d.sync += [index[q].eq(flits[q].index) for q in range(ports)]
        consumed = [[done & resyncing[c] & holds[q] for q in range(ports)] for c in range(ids)]
        m.d.comb += self.mismatch.eq(done)
        return done, consumed

    def _watchdog(self, m: Module, cfg, present, full) -> None:
        """Per reducing id: count the cycles it waits with some but not all contributors
        present; in its ``timeout``-th cycle of waiting latch the missing ports, raise
        ``timed_out`` and pulse ``stalled``. ``abort`` clears it. A change of ``timeout``
        starts every count again: a value written while an id waits (or after it waited with
        the watchdog off) counts from the write, so it fires ``timeout`` cycles later at the
        latest, whatever the count held."""
        p = self._params
        # One register for every id: the count of a wait compares with one value only.
        before = Signal.like(self.timeout, name="watch_timeout")
        m.d.sync += before.eq(self.timeout)
        changed = self.timeout != before
        fired = []
        for c in range(p.collective_ids):
            waiting = Signal(name=f"watch{c}_waiting")
            count = Signal(TIMEOUT_BITS, name=f"watch{c}_count")
            fire = Signal(name=f"watch{c}_fire")
            m.d.comb += [
                waiting.eq(cfg[c].tree & present[c].any() & ~full[c] & ~self.timed_out[c]),
                fire.eq(waiting & ~changed & (self.timeout != 0)
                        & (count == self.timeout - 1)),
            ]
            with m.If(self.abort[c]):
                m.d.sync += [count.eq(0), self.timed_out[c].eq(0), self.missing[c].eq(0)]
            with m.Elif(fire):
                m.d.sync += [count.eq(0), self.timed_out[c].eq(1),
                             self.missing[c].eq(cfg[c].contrib & ~present[c])]
            with m.Elif(waiting & ~changed):
                m.d.sync += count.eq(count + 1)
            with m.Else():
                m.d.sync += count.eq(0)
            fired.append(fire)
        m.d.comb += self.stalled.eq(any_of(fired))


def _bounds(indices, contrib) -> tuple[Value, Value]:
    """The AND and the OR of the ``indices`` of the ports in ``contrib`` (at least one): equal
    when those indices are all equal, and then the OR is their index."""
    width = len(indices[0])
    return (_reduce(lambda a, b: a & b, [index | (~contrib[q]).replicate(width)
                                         for q, index in enumerate(indices)]),
            _reduce(lambda a, b: a | b, [index & contrib[q].replicate(width)
                                         for q, index in enumerate(indices)]))


def _reduce(function, values: list):
    """``values`` combined with ``function`` as a balanced tree (a chain is as deep as long)."""
    while len(values) > 1:
        values = [function(values[k], values[k + 1]) if k + 1 < len(values) else values[k]
                  for k in range(0, len(values), 2)]
    return values[0]


# -- formal properties -------------------------------------------------------------------------

#: The formal properties of :class:`CollectiveEngine`, by name (:func:`engine_properties`).
ENGINE_PROPERTIES = {
    "in-order": "when every contributing port supplies an id's elements in index order, the "
                "id's results leave one per element, in index order, none skipped or repeated, "
                "each to the id's targets, whatever the other id, the credits, the switch's "
                "readiness and the configuration do",
    "isolation": "an id whose contributors all hold their next element, and whose targets "
                 "hold credits, offers a result within engine_latency(k, radix) + 2 cycles (k its "
                 "contributing ports) while the switch takes what is offered, whatever the "
                 "other id does (a contributor missing for ever, garbage, out of step)",
}


def engine_properties(name: str, radix: int = 1, *, block: type = CollectiveEngine
                      ) -> tuple[Module, list[Signal]]:
    """A formal harness: ``block(params, radix, 1)`` with two collective ids, 2-bit element
    indices and request buffers of 1 flit (one credit per id and port), driven by free
    inputs, with the property ``name`` of :data:`ENGINE_PROPERTIES` as ``Assert`` and
    ``Cover`` s that show it is not vacuous (for ``in-order``, a result of id 0 leaving after
    the index has wrapped, and a reduced one; for ``isolation``, a result of id 0 leaving
    while id 1's watchdog has fired).

    Id 0 is the watched id: its configuration is a free constant that reduces or forwards
    (``req_in`` not empty, an operation the engine implements on the data type, a target), and
    each of its contributing ports receives its elements in index order (the element arriving
    on port ``q`` is the number of id 0's flits that arrived there), from the third cycle on
    (the engine applies its configuration two cycles after a write). Payloads are free. Id 1
    is free: any configuration, any flits on any port, abort and timeout free. A port receives
    one flit per cycle, of either id, and only while the id's buffer there has room (the
    sender's credits, counted from ``req_pop``). The credits of the outputs are free; the
    switch's ``ready`` is free for ``in-order`` and high for ``isolation``. The engine's own
    logic is unchanged; ``block`` may be a variant (a mutation).

    Returns
    -------
    (Module, list of Signal)
        The harness and its free inputs.

    Raises
    ------
    ValueError
        If ``name`` is not a property of :data:`ENGINE_PROPERTIES`.
    """
    from amaranth import Value
    from amaranth.hdl import Assert, Assume, Cover

    from innet.gen.ops import DType, Op, is_supported
    from innet.hw.collective import config_layout
    from innet.hw.testing import free_constant

    if name not in ENGINE_PROPERTIES:
        raise ValueError(f"Engine property must be one of {', '.join(ENGINE_PROPERTIES)}, "
                         f"not {name!r}")
    p = FlitParams(payload_width=32, routing_depth=2, collective_ids=2, p2p_vcs=1,
                   index_width=2, tag_width=1)
    ports = radix + 1
    m = Module()
    m.submodules.dut = dut = block(p, radix, 1)
    age = Signal(2, name="age")
    with m.If(age != 3):
        m.d.sync += age.eq(age + 1)
    started = age != 0
    settled = age >= 2
    free = []

    def constant(shape, label: str):
        return free_constant(m, shape, label, started, free)

    def fresh(shape, label: str):
        signal = Signal(shape, name=label)
        free.append(Value.cast(signal))
        return signal

    configs = [constant(config_layout(radix), f"config{c}") for c in range(2)]
    m.d.comb += [dut.config[c].eq(configs[c]) for c in range(2)]
    watched = configs[0]
    ok = Const(0, 1)
    for op in Op:
        for dtype in DType:
            if is_supported(op, dtype) and op != Op.MUL:
                ok = ok | ((watched.op == op) & (watched.dtype == dtype))
    m.d.comb += [
        Assume(watched.enable & watched.req_in.any() & ok),
        Assume(Mux(watched.root, watched.resp_out.any(), watched.req_out <= radix)),
    ]
    m.d.comb += [dut.credit_req[c].eq(fresh(ports, f"credit_req{c}")) for c in range(2)]
    m.d.comb += dut.credit_resp.eq(fresh(ports, "credit_resp"))
    m.d.comb += [dut.abort.eq(Cat(0, fresh(1, "abort1"))),
                 dut.timeout.eq(fresh(TIMEOUT_BITS, "timeout"))]
    m.d.comb += dut.result.ready.eq(fresh(1, "ready") if name == "in-order" else 1)

    # The arrivals: id 0's elements in order on its contributing ports, id 1's anything.
    depth = dut.depth
    held = [[Signal(range(depth + 1), name=f"req{c}_{q}_held") for q in range(ports)]
            for c in range(2)]
    for q in range(ports):
        arriving = dut.req[q]
        valid, cid = fresh(1, f"req{q}_valid"), fresh(1, f"req{q}_cid")
        flit = fresh(p.layout, f"req{q}_flit")
        written = Signal(p.index_width, name=f"req0_{q}_written")
        m.d.sync += written.eq(written + (valid & ~cid))
        m.d.comb += [
            arriving.valid.eq(valid),
            arriving.payload.eq(flit),
            arriving.payload.kind.eq(Kind.REQ),
            arriving.payload.cid.eq(cid),
            Assume(~valid | (held[0][q] != depth) | cid),
            Assume(~valid | (held[1][q] != depth) | ~cid),
            Assume(~valid | cid | settled & watched.req_in[q]),
        ]
        with m.If(~cid):
            m.d.comb += arriving.payload.index.eq(written)
        for c in range(2):
            m.d.sync += held[c][q].eq(held[c][q] + (valid & (cid == c)) - dut.req_pop[c][q])

    # The results of id 0 the switch takes.
    result = dut.result
    sent = result.valid & result.ready & (result.payload.cid == 0)
    index = result.payload.index
    targets = Signal(ports, name="targets")
    m.d.comb += targets.eq(Mux(watched.root, watched.resp_out,
                               Cat(*(watched.req_out == q for q in range(ports)))))
    expected = Signal(p.index_width, name="expected")
    wrapped = Signal(name="wrapped")
    with m.If(sent):
        m.d.sync += expected.eq(expected + 1)
        with m.If(expected == (1 << p.index_width) - 1):
            m.d.sync += wrapped.eq(1)
    if name == "in-order":
        m.d.comb += [
            Assert(~sent | (index == expected)),
            Assert(~sent | (result.targets == targets)),
            Assert(~sent | (result.payload.kind.as_value()
                            == Mux(watched.root, Kind.RESP.value, Kind.REQ.value))),
            Cover(sent & wrapped),
            Cover(sent & (watched.req_in == (1 << ports) - 1)),
        ]
        return m, free

    # isolation: id 0 ready to go (every contributor holds its head, every target a credit)
    # waits at most ``bound`` cycles for its next result.
    credits = Mux(watched.root, dut.credit_resp, dut.credit_req[0])
    heads = Cat(*(held[0][q] != 0 for q in range(ports)))
    ready = settled & ((heads & watched.req_in) == watched.req_in) & ((targets & ~credits) == 0)
    waited = Signal(range(64), name="waited")
    with m.If(sent | ~ready):
        m.d.sync += waited.eq(0)
    with m.Elif(waited != 63):
        m.d.sync += waited.eq(waited + 1)
    # The bound follows the watched id's port count: engine_latency(k, radix) + 2.
    k = _popcount(watched.req_in[q] for q in range(ports))
    bound = Signal(range(64), name="bound")
    m.d.comb += bound.eq(engine_latency(ports, radix) + 2)
    for count in range(1, ports):
        with m.If(k == count):
            m.d.comb += bound.eq(engine_latency(count, radix) + 2)
    m.d.comb += [Assert(waited <= bound), Cover(sent & dut.timed_out[1])]
    return m, free
