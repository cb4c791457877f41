"""The collective engine: the switch's collective path with a pipelined reduction tree.

PIUMA, "Switch Architecture for In-network Computing": the Collective Engine reduces in-flight
request packets of several input ports "in a fixed port order when all required inputs are
available"; request and response packets travel on their own virtual channels ("Collective
Virtual Channel", "Request-response Mechanism"); the root turns the reduced value into a
response that is multicast down the inverse tree ("Broadcast Tree"); several collective ids
each have their own registers ("Multiple In-network Collectives").
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring

from innet.gen.checks import check_int
from innet.hw.alu import LATENCY
from innet.hw.arbiter import ConflictArbiter, RoundRobin, any_of, onehot_mux
from innet.hw.buffer import Buffer
from innet.hw.ceng.tree import ReductionTree, levels_for
from innet.hw.collective import TIMEOUT_BITS, path_members
from innet.hw.flit import FlitParams, Kind

__all__ = ["ENGINE_PROPERTIES", "CollectiveEngine", "engine_latency", "engine_properties"]


def engine_latency(count: int) -> int:
    """Cycles the engine adds to a switch crossing for a reduction of ``count`` ports.

    0 when ``count`` is 1 (the flit leaves like a forwarded one, in
    :data:`innet.hw.switch.HOP_CYCLES` = 3 cycles through the switch); otherwise
    ``1 + LATENCY * ceil(log2(count))``: one cycle to gather and compact the operands, then
    :data:`innet.hw.alu.LATENCY` = 9 per tree level. A switch is then crossed in
    ``3 + engine_latency(count)`` cycles, counted from the last operand's arrival: 13, 22, 31
    and 40 cycles for 2, 3-4, 5-8 and 9-16 ports.

    Raises
    ------
    TypeError, ValueError
        If ``count`` is not a positive integer.
    """
    levels = levels_for(count)
    return 0 if levels == 0 else 1 + LATENCY * levels


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

    - ``k >= 2``: the engine waits until every port of ``req_in`` holds a request flit of
      ``c`` at the head of its buffer, pops them together, and reduces their payloads with
      ``config[c].op`` on ``config[c].dtype`` in port order (network ports ascending, the local
      port ``radix`` last), compacted onto the first ``k`` leaves of a :class:`ReductionTree`
      of :class:`~innet.hw.alu.ALU` s, so the result takes ``ceil(log2 k)`` ALU latencies
      (shape: :func:`~innet.hw.ceng.tree.tree_shape`). The result leaves as one flit (its
      element index, ``cid = c``): a request to ``req_out``, or at the root a response
      multicast to ``resp_out``. If the heads' element indices differ (a flit was lost or sent
      twice), nothing is reduced: the heads holding the oldest index are discarded and
      ``mismatch`` pulses, so that a lost flit costs one element and the streams are back in
      step (:meth:`_resync`); an operation the ALUs do not implement on the data type discards
      the element and pulses ``unsupported``. Never a wrong result.
    - ``k == 1``: no reduction: the flit is forwarded like the pass-through does (a response
      at the root), in the cycle it is at the head of its buffer.
    - requests on ports outside ``req_in`` (or of a disabled id) are discarded and ``dropped``
      pulses.

    Response flits (every id) are multicast to ``resp_out`` of their id, like the
    pass-through. Every multicast leaves only when every target output holds a credit, all
    copies in the same cycle.

    Latency and throughput
    ----------------------
    With credits available, a reduction's flit is on ``send`` :func:`engine_latency` cycles
    after its last operand reached the head of its buffer (0 for ``k == 1`` and responses).
    The tree takes one element per cycle: the ids with a complete set of heads take turns
    (round-robin, one element each), so one id alone reduces one element per cycle and
    several ids share that rate (PIUMA, "Multiple In-network Collectives": collectives on
    different ids that overlap on a switch are executed one at a time; here they interleave
    element by element). Forwarded requests (``k == 1``) and responses do not use the tree
    and flow in parallel, one flit per output per cycle.

    The tree never stalls. Instead every id owns an output queue of ``queue_depth`` results,
    and an element enters the tree only when its id has a free slot in it (counting the
    elements still in the tree): a result that cannot leave for lack of credits waits in its
    own id's queue and never holds up another id, so ids cannot deadlock each other through
    the engine. ``queue_depth`` of at least ``LATENCY * ceil(log2 k) + 2`` keeps one id at one
    element per cycle; the default covers ``k = radix + 1``.

    A watchdog per reducing id (``timeout``, :meth:`_watchdog`) names the contributors missing
    when the id has waited too long; ``abort`` drains an id (its heads, queued results and
    responses are discarded) and ``busy`` says when it is quiet (see
    :mod:`innet.hw.collective`).

    Configuration (``config``) is registered once more inside the engine: a register write
    applies to flits at the head of a buffer two cycles later. :class:`innet.hw.switch.Switch`
    refuses writes to an enabled id while ``busy``.

    Parameters
    ----------
    params : FlitParams
        The flit format; ``payload_width`` must be 32 (the ALUs' width).
    radix : int
        Network ports (the local port is ``radix``).
    mul : bool
        Build the ALUs with their multiplier (``mul`` of every data type). Off by default: the
        multipliers are about half the tree, and in-network reductions are sums, minima,
        maxima and bitwise operations; without them ``mul`` is unsupported (``coll_op``).
    queue_depth : int, optional
        Results per id the output queue holds (default ``LATENCY * ceil(log2(radix + 1)) + 2``).

    Members
    -------
    As :class:`~innet.hw.collective.CollectivePath` (``req``, ``resp``, ``config``,
    ``credit_req``, ``credit_resp``, ``send``, ``dropped``, ``mismatch``, ``unsupported``,
    ``abort``, ``busy``, ``timeout``, ``stalled``, ``timed_out``, ``missing``).

    Raises
    ------
    TypeError, ValueError
        On a parameter of the wrong type or out of range.
    """

    def __init__(self, params: FlitParams, radix: int, *, mul: bool = False,
                 queue_depth: int | None = None) -> None:
        if not isinstance(params, FlitParams):
            raise TypeError(f"Params must be a FlitParams, not {params!r}")
        check_int("Radix", radix, low=1)
        if params.payload_width != 32:
            raise ValueError(f"The collective engine reduces 32-bit payloads, not "
                             f"{params.payload_width}-bit ones")
        if not isinstance(mul, bool):
            raise TypeError(f"Multiplier option must be a bool, not {mul!r}")
        levels = levels_for(radix + 1)
        if queue_depth is None:
            queue_depth = LATENCY * levels + 2
        check_int("Queue depth", queue_depth, low=1)
        self._params = params
        self._radix = radix
        self._mul = mul
        self._queue_depth = queue_depth
        super().__init__(path_members(params, radix))

    @property
    def params(self) -> FlitParams:
        return self._params

    @property
    def radix(self) -> int:
        return self._radix

    @property
    def mul(self) -> bool:
        return self._mul

    @property
    def queue_depth(self) -> int:
        return self._queue_depth

    @property
    def levels(self) -> int:
        """Levels of the reduction tree: ``ceil(log2(radix + 1))``."""
        return levels_for(self._radix + 1)

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
            "resp_targets": ports,           # where responses go
            "op": 4,
            "dtype": 2,
        })
        cfg = [Signal(decoded, name=f"cfg{c}") for c in range(ids)]
        # sel[c][j]: one-hot port of the j-th contributing port (bits below j are always 0).
        sel = [[Signal(ports, name=f"cfg{c}_sel{j}") for j in range(ports)] for c in range(ids)]
        for c in range(ids):
            reg = self.config[c]
            contrib = Mux(reg.enable, reg.req_in, 0)
            count = _popcount(contrib[q] for q in range(ports))
            decode_out = Cat(*(reg.req_out == q for q in range(ports)))
            m.d.sync += [
                cfg[c].contrib.eq(contrib),
                cfg[c].count.eq(count),
                cfg[c].tree.eq(count >= 2),
                cfg[c].forward.eq(count == 1),
                cfg[c].root.eq(reg.root),
                cfg[c].targets.eq(Mux(reg.enable, Mux(reg.root, reg.resp_out, decode_out), 0)),
                cfg[c].resp_targets.eq(Mux(reg.enable, reg.resp_out, 0)),
                cfg[c].op.eq(reg.op),
                cfg[c].dtype.eq(reg.dtype),
            ]
            rank = [_popcount(contrib[r] for r in range(q)) for q in range(ports)]
            for j in range(ports):
                m.d.sync += sel[c][j].eq(Cat(*(
                    contrib[q] & (rank[q] == j) if q >= j else Const(0, 1)
                    for q in range(ports))))

        ready_terms = [[[] for _ in range(ports)] for _ in range(ids)]  # pops of req[c][q]
        dropped = []

        abort = self.abort
        iw = p.index_width

        # ---- Requests outside the configuration are discarded -------------------------------
        for c in range(ids):
            for q in range(ports):
                stray = Signal(name=f"stray{c}_{q}")
                m.d.comb += stray.eq(self.req[c][q].valid & ~cfg[c].contrib[q] & ~abort[c])
                ready_terms[c][q] += [stray, abort[c]]
                dropped.append(stray)

        # ---- Per id: every contributing head present, and all of one element -----------------
        present = [Signal(ports, name=f"present{c}") for c in range(ids)]
        full = [Signal(name=f"full{c}") for c in range(ids)]
        agree = [Signal(name=f"agree{c}") for c in range(ids)]
        for c in range(ids):
            on = cfg[c].contrib
            index = [self.req[c][q].payload.index for q in range(ports)]
            m.d.comb += [
                present[c].eq(Cat(*(self.req[c][q].valid for q in range(ports))) & on),
                full[c].eq(present[c] == on),
                agree[c].eq(
                    _reduce(lambda a, b: a & b,
                            [index[q] | (~on[q]).replicate(iw) for q in range(ports)])
                    == _reduce(lambda a, b: a | b,
                               [index[q] & on[q].replicate(iw) for q in range(ports)])),
            ]

        # ---- Issue: one id per cycle whose heads are all present, round-robin ----------------
        reserved = [Signal(range(depth + 1), name=f"reserved{c}") for c in range(ids)]
        issue_rr = RoundRobin(ids)
        m.submodules.issue_rr = issue_rr
        for c in range(ids):
            m.d.comb += issue_rr.requests[c].eq(cfg[c].tree & full[c] & agree[c] & ~abort[c]
                                                & (reserved[c] != depth))
        grant = issue_rr.grant
        m.d.comb += issue_rr.take.eq(grant.any())
        for c in range(ids):
            for q in range(ports):
                ready_terms[c][q].append(grant[c] & cfg[c].contrib[q])

        # Gather the granted id's heads, compact them onto the first leaves, compare indices.
        operand = [onehot_mux(grant, [self.req[c][q].payload.payload for c in range(ids)])
                   for q in range(ports)]
        index = [onehot_mux(grant, [self.req[c][q].payload.index for c in range(ids)])
                 for q in range(ports)]
        contrib = Signal(ports)
        m.d.comb += contrib.eq(onehot_mux(grant, [cfg[c].contrib for c in range(ids)]))
        issue = Signal(data.StructLayout({
            "valid": 1, "cid": p.cid_width, "index": iw,
            "count": range(ports + 1), "op": 4, "dtype": 2,
        }), name="issue")
        leaves = [Signal(32, name=f"issue_leaf{j}", reset_less=True) for j in range(ports)]
        m.d.sync += [
            issue.valid.eq(grant.any()),
            issue.cid.eq(onehot_mux(grant, [Const(c, p.cid_width) for c in range(ids)])),
            # The heads agree: any contributing head's index is the element's.
            issue.index.eq(_reduce(lambda a, b: a | b,
                                   [index[q] & contrib[q].replicate(iw) for q in range(ports)])),
            issue.count.eq(onehot_mux(grant, [cfg[c].count for c in range(ids)])),
            issue.op.eq(onehot_mux(grant, [cfg[c].op for c in range(ids)])),
            issue.dtype.eq(onehot_mux(grant, [cfg[c].dtype for c in range(ids)])),
        ]
        for j in range(ports):
            chosen = onehot_mux(grant, [sel[c][j] for c in range(ids)])
            m.d.sync += leaves[j].eq(onehot_mux([chosen[q] for q in range(j, ports)],
                                                operand[j:]))

        self._resync(m, cfg, full, agree, ready_terms)
        self._watchdog(m, cfg, present, full)

        # ---- The tree -----------------------------------------------------------------------
        tree = ReductionTree(ports, tag_width=p.cid_width + iw, mul=self._mul)
        m.submodules.tree = tree
        m.d.comb += [
            tree.i_valid.eq(issue.valid),
            tree.i_count.eq(issue.count),
            tree.i_op.eq(issue.op),
            tree.i_dtype.eq(issue.dtype),
            tree.i_tag.eq(Cat(issue.cid, issue.index)),
        ]
        for j in range(ports):
            m.d.comb += tree.i_leaf[j].eq(leaves[j])

        # ---- Results: per id, the tree's exit or the id's queue -----------------------------
        result = data.StructLayout({"payload": 32, "index": iw})
        unsupported = []
        src_valid = [Signal(name=f"src{s}_valid") for s in range(ids + ports)]
        # Collective flits carry kind, cid, index and payload; the other fields travel as zero.
        sent = data.StructLayout({"payload": 32, "index": iw, "cid": p.cid_width, "kind": Kind})
        src_flit = [Signal(sent, name=f"src{s}_flit") for s in range(ids + ports)]
        src_targets = [Signal(ports, name=f"src{s}_targets") for s in range(ids + ports)]
        src_credits = [Signal(ports, name=f"src{s}_credits") for s in range(ids + ports)]
        src_pop = [Signal(name=f"src{s}_pop") for s in range(ids + ports)]

        for c in range(ids):
            hits = [o.valid & (o.tag[:p.cid_width] == c) for o in tree.o]
            hit = Signal(name=f"exit{c}")
            bad = Signal(name=f"exit{c}_unsupported")
            out = Signal(result, name=f"exit{c}_result")
            m.d.comb += [
                hit.eq(any_of(hits)),
                bad.eq(any_of(h & o.unsupported for h, o in zip(hits, tree.o, strict=True))),
                out.payload.eq(onehot_mux(hits, [o.result for o in tree.o])),
                out.index.eq(onehot_mux(hits, [o.tag[p.cid_width:] for o in tree.o])),
            ]
            unsupported.append(bad)
            good = hit & ~bad

            queue = Buffer(result, depth)
            m.submodules[f"queue{c}"] = queue
            waiting = queue.r.valid
            head = Signal(result, name=f"result{c}")
            m.d.comb += [
                head.eq(Mux(waiting, queue.r.payload, out)),
                queue.r.ready.eq(src_pop[c] | abort[c]),
                # A result goes straight out when the queue is empty and it can leave now.
                queue.w.valid.eq(good & ~abort[c] & ~(src_pop[c] & ~waiting)),
                queue.w.payload.eq(out),
            ]
            # k == 1: the head of the one contributing port, forwarded.
            only = sel[c][0]
            forward = Signal(result, name=f"forward{c}")
            m.d.comb += [
                forward.payload.eq(onehot_mux(only, [self.req[c][q].payload.payload
                                                     for q in range(ports)])),
                forward.index.eq(onehot_mux(only, [self.req[c][q].payload.index
                                                   for q in range(ports)])),
            ]
            fwd_valid = any_of(only[q] & self.req[c][q].valid for q in range(ports))
            for q in range(ports):
                ready_terms[c][q].append(src_pop[c] & cfg[c].forward & only[q])
            results = Mux(cfg[c].tree, waiting | good, cfg[c].forward & fwd_valid)

            chosen = Signal(result, name=f"source{c}")
            m.d.comb += chosen.eq(Mux(cfg[c].tree, head, forward))
            m.d.comb += [
                src_valid[c].eq(results & ~abort[c]),
                src_flit[c].kind.eq(Mux(cfg[c].root, Kind.RESP, Kind.REQ)),
                src_flit[c].cid.eq(c),
                src_flit[c].index.eq(chosen.index),
                src_flit[c].payload.eq(chosen.payload),
                src_targets[c].eq(cfg[c].targets),
                src_credits[c].eq(Mux(cfg[c].root, self.credit_resp, self.credit_req[c])),
            ]

            # Output slots in use: elements in the tree or the queue. Under abort the tree's
            # results of the id and its queue are discarded.
            taken = cfg[c].tree & src_pop[c]
            m.d.sync += reserved[c].eq(reserved[c] + grant[c] - taken - bad
                                       - (abort[c] & waiting) - (abort[c] & good))
            resp_here = any_of(h.valid & (h.payload.cid == c) for h in self.resp)
            m.d.sync += self.busy[c].eq(any_of(h.valid for h in self.req[c])
                                        | (reserved[c] != 0) | resp_here)

        m.d.comb += self.unsupported.eq(any_of(unsupported))

        # ---- Responses: the head of each port's response buffer -----------------------------
        for q, h in enumerate(self.resp):
            s = ids + q
            aborted = onehot_mux([h.payload.cid == c for c in range(ids)],
                                 [abort[c] for c in range(ids)])
            m.d.comb += [
                src_valid[s].eq(h.valid & ~aborted),
                src_flit[s].kind.eq(Kind.RESP),
                src_flit[s].cid.eq(h.payload.cid),
                src_flit[s].index.eq(h.payload.index),
                src_flit[s].payload.eq(h.payload.payload),
                src_targets[s].eq(onehot_mux([h.payload.cid == c for c in range(ids)],
                                             [cfg[c].resp_targets for c in range(ids)])),
                src_credits[s].eq(self.credit_resp),
                h.ready.eq(src_pop[s] | aborted),
            ]

        # ---- Output allocation: sources whose targets all hold a credit ---------------------
        sources = ids + ports
        arb = ConflictArbiter(sources, ports)
        m.submodules.arbiter = arb
        for s in range(sources):
            drop = Signal(name=f"src{s}_drop")
            m.d.comb += [
                drop.eq(src_valid[s] & ~src_targets[s].any()),
                arb.requests[s].eq(src_valid[s] & src_targets[s].any()
                                   & ((src_targets[s] & ~src_credits[s]) == 0)),
                arb.targets[s].eq(src_targets[s]),
                src_pop[s].eq(arb.grant[s] | drop),
            ]
            dropped.append(drop)
        m.d.comb += self.dropped.eq(any_of(dropped))
        for o in range(ports):
            picks = [arb.grant[s] & src_targets[s][o] for s in range(sources)]
            flit = Signal(sent, name=f"send{o}_flit")
            send = self.send[o]
            m.d.comb += [
                send.valid.eq(any_of(picks)),
                flit.eq(onehot_mux(picks, src_flit)),
                send.payload.kind.eq(flit.kind),
                send.payload.cid.eq(flit.cid),
                send.payload.index.eq(flit.index),
                send.payload.payload.eq(flit.payload),
            ]

        for c in range(ids):
            for q in range(ports):
                m.d.comb += self.req[c][q].ready.eq(any_of(ready_terms[c][q]))
        return m

    def _resync(self, m: Module, cfg, full, agree, ready_terms) -> None:
        """Bring an id whose heads hold different element indices back in step.

        One unit serves every id (a lost or duplicated flit is rare): it scans the id's
        contributing heads one port per cycle for the oldest index (serial-number order, so
        that indices may wrap), then pops the heads holding it and pulses ``mismatch``. A lost
        flit costs the one element it belonged to; a duplicated one costs nothing.
        """
        p = self._params
        ids, ports, iw = p.collective_ids, self._radix + 1, p.index_width
        out_of_step = Cat(*(cfg[c].tree & full[c] & ~agree[c] & ~self.abort[c]
                            for c in range(ids)))
        active = Signal(name="resync")
        cid = Signal(ids, name="resync_cid")  # one-hot
        step = Signal(range(ports + 1), name="resync_step")
        have = Signal(name="resync_have")
        oldest = Signal(iw, name="resync_oldest")
        contrib = Signal(ports, name="resync_contrib")
        index = [Signal(iw, name=f"resync_index{q}") for q in range(ports)]
        m.d.comb += contrib.eq(onehot_mux(cid, [cfg[c].contrib for c in range(ids)]))
        for q in range(ports):
            m.d.comb += index[q].eq(onehot_mux(cid, [self.req[c][q].payload.index
                                                     for c in range(ids)]))
        done = Signal(name="resync_done")
        m.d.comb += done.eq(active & (step == ports) & ~(cid & self.abort).any())
        with m.If(active & ((step == ports) | (cid & self.abort).any())):
            m.d.sync += active.eq(0)
        with m.Elif(active):
            m.d.sync += step.eq(step + 1)
            with m.Switch(step):
                for q in range(ports):
                    with m.Case(q):
                        earlier = (index[q] - oldest)[iw - 1]
                        with m.If(contrib[q] & (~have | earlier)):
                            m.d.sync += [oldest.eq(index[q]), have.eq(1)]
        with m.Elif(out_of_step.any()):
            first = out_of_step & -out_of_step  # the lowest id out of step
            m.d.sync += [active.eq(1), cid.eq(first), step.eq(0), have.eq(0)]
        for c in range(ids):
            for q in range(ports):
                ready_terms[c][q].append(done & cid[c] & contrib[q] & (index[q] == oldest))
        m.d.comb += self.mismatch.eq(done)

    def _watchdog(self, m: Module, cfg, present, full) -> None:
        """Per reducing id: count the cycles it waits with some but not all contributors
        present; at ``timeout`` latch the missing ports, raise ``timed_out`` and pulse
        ``stalled``. ``abort`` clears it."""
        p = self._params
        fired = []
        for c in range(p.collective_ids):
            waiting = Signal(name=f"watch{c}_waiting")
            count = Signal(TIMEOUT_BITS, name=f"watch{c}_count")
            fire = Signal(name=f"watch{c}_fire")
            m.d.comb += [
                waiting.eq(cfg[c].tree & present[c].any() & ~full[c] & ~self.timed_out[c]),
                fire.eq(waiting & (self.timeout != 0) & (count == self.timeout - 1)),
            ]
            with m.If(self.abort[c]):
                m.d.sync += [count.eq(0), self.timed_out[c].eq(0), self.missing[c].eq(0)]
            with m.Elif(fire):
                m.d.sync += [count.eq(0), self.timed_out[c].eq(1),
                             self.missing[c].eq(cfg[c].contrib & ~present[c])]
            with m.Elif(waiting):
                m.d.sync += count.eq(count + 1)
            with m.Else():
                m.d.sync += count.eq(0)
            fired.append(fire)
        m.d.comb += self.stalled.eq(any_of(fired))


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
                "id's results leave one per element, in index order, none skipped or repeated "
                "(a multicast carries one result on all its ports), whatever the other id, the "
                "credits and the configuration do",
    "isolation": "an id whose contributors all hold their next element, and whose targets "
                 "hold credits, sends a result within a bounded number of cycles, whatever "
                 "the other id does (a contributor missing for ever, garbage, out of step)",
}


def engine_properties(name: str, radix: int = 1, *, block: type = CollectiveEngine
                      ) -> tuple[Module, list[Signal]]:
    """A formal harness: ``block(params, radix)`` with two collective ids and 2-bit element
    indices, driven by free inputs, with the property ``name`` of :data:`ENGINE_PROPERTIES` as
    ``Assert`` and a ``Cover`` that shows it is not vacuous (a reduced result of id 0 leaving
    after the index has wrapped; for ``isolation``, a result of id 0 leaving while id 1's
    watchdog has fired).

    Id 0 is the watched id: its configuration is a free constant that reduces or forwards
    (``req_in`` not empty, an operation the ALUs implement on the data type, a target), and
    each of its contributing ports presents its elements in index order (the element at the
    head of port ``q`` is the number of elements popped there), each head held until it is
    popped, from the third cycle on (the engine applies its configuration two cycles after a
    write). Payloads are free. Id 1 is free: any configuration, any flits on any port, abort
    and timeout free. Responses from other switches do not arrive. The credits are free.
    The engine's own logic is unchanged; ``block`` may be a variant (a mutation).

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
    m.submodules.dut = dut = block(p, radix)
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
    for q in range(ports):
        m.d.comb += dut.resp[q].valid.eq(0)

    # Id 0: in-order streams on its contributing ports.
    for q in range(ports):
        head = dut.req[0][q]
        valid, payload = fresh(1, f"req0_{q}_valid"), fresh(32, f"req0_{q}_payload")
        popped = Signal(p.index_width, name=f"req0_{q}_popped")
        was, kept = Signal(name=f"req0_{q}_was"), Signal(32, name=f"req0_{q}_kept")
        pop = head.valid & head.ready
        m.d.sync += [was.eq(head.valid & ~head.ready), kept.eq(head.payload.payload),
                     popped.eq(popped + pop)]
        m.d.comb += [
            head.valid.eq(valid), head.payload.payload.eq(payload),
            head.payload.kind.eq(Kind.REQ), head.payload.cid.eq(0),
            head.payload.index.eq(popped),
            Assume(~valid | settled & watched.req_in[q]),
            Assume(~was | valid & (payload == kept)),  # a head stays until popped
        ]
    # Id 1: anything.
    for q in range(ports):
        head = dut.req[1][q]
        m.d.comb += [head.valid.eq(fresh(1, f"req1_{q}_valid")),
                     head.payload.eq(fresh(p.layout, f"req1_{q}_flit")),
                     head.payload.kind.eq(Kind.REQ), head.payload.cid.eq(1)]

    # The results of id 0: one per cycle at most (a multicast is one result on several ports).
    sends = [dut.send[o].valid & (dut.send[o].payload.cid == 0) for o in range(ports)]
    sent = any_of(sends)
    index = onehot_mux(sends, [dut.send[o].payload.index for o in range(ports)])
    expected = Signal(p.index_width, name="expected")
    wrapped = Signal(name="wrapped")
    with m.If(sent):
        m.d.sync += expected.eq(expected + 1)
        with m.If(expected == (1 << p.index_width) - 1):
            m.d.sync += wrapped.eq(1)
    if name == "in-order":
        m.d.comb += [
            Assert(~sent | (index == expected)),
            *[Assert(~sends[o] | (dut.send[o].payload.index == index)) for o in range(ports)],
            Cover(sent & wrapped & (watched.req_in == (1 << ports) - 1)),
        ]
        return m, free

    # isolation: id 0 ready to go (every contributor holds its head, every target a credit)
    # waits at most ``bound`` cycles for its next result.
    targets = Signal(ports, name="targets")
    m.d.comb += targets.eq(Mux(watched.root, watched.resp_out,
                               Cat(*(watched.req_out == q for q in range(ports)))))
    credits = Mux(watched.root, dut.credit_resp, dut.credit_req[0])
    heads = Cat(*(dut.req[0][q].valid for q in range(ports)))
    ready = settled & ((heads & watched.req_in) == watched.req_in) & ((targets & ~credits) == 0)
    waited = Signal(range(64), name="waited")
    with m.If(sent | ~ready):
        m.d.sync += waited.eq(0)
    with m.Elif(waited != 63):
        m.d.sync += waited.eq(waited + 1)
    bound = engine_latency(ports) + 3
    m.d.comb += [Assert(waited <= bound), Cover(sent & dut.timed_out[1])]
    return m, free
