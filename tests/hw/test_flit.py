"""innet.hw.flit: layout, VC numbering, pack/unpack against the Amaranth layout."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from innet.hw.flit import Flit, FlitParams, Kind, bits_for, link_signature, stream_signature


def test_default_widths():
    p = FlitParams()
    assert p.widths == {"payload": 32, "index": 16, "tag": 8, "src": 6, "dst": 6, "cid": 2,
                        "hop": 1, "kind": 2}
    assert p.width == 73
    assert p.vcs == 2 + 4 + 1


@pytest.mark.parametrize("params", [
    FlitParams(),
    FlitParams(payload_width=8, routing_depth=5, collective_ids=3, p2p_vcs=3, index_width=4,
               tag_width=3),
    FlitParams(payload_width=64, routing_depth=1, collective_ids=1, p2p_vcs=1),
])
def test_layout_matches_offsets(params):
    layout = params.layout
    assert layout.size == params.width
    for name, field in layout:
        assert field.offset == params.offsets[name]
        assert field.width == params.widths[name]


def random_flit(rng, p):
    kind = rng.choice(list(Kind))
    fields = {name: rng.getrandbits(w) for name, w in p.widths.items() if name != "kind"}
    fields["cid"] = rng.randrange(p.collective_ids)
    fields["hop"] = rng.randrange(p.p2p_vcs)
    return Flit(kind, **fields)


@pytest.mark.parametrize("params", [FlitParams(), FlitParams(routing_depth=13, p2p_vcs=4)])
def test_pack_unpack_roundtrip_and_hardware_view(params):
    """pack() puts each field where the Amaranth View reads it, and unpack() inverts pack()."""
    rng = random.Random(7)
    flits = [random_flit(rng, params) for _ in range(200)]
    sig, out = Signal(params.layout), Signal(params.layout)
    m = Module()
    m.d.comb += out.eq(sig)
    seen = []

    async def bench(ctx):
        for flit in flits:
            word = params.pack(flit)
            assert params.unpack(word) == flit
            ctx.set(sig.as_value(), word)
            seen.append({name: ctx.get(getattr(out, name)) for name in params.widths})

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    for flit, got in zip(flits, seen, strict=True):
        for name in params.widths:
            want = flit.kind if name == "kind" else getattr(flit, name)
            assert got[name] == want, name


def test_vc_numbering():
    p = FlitParams(collective_ids=3, p2p_vcs=2)
    assert [p.vc(Flit.p2p(0, 0, 0, hop=h)) for h in range(2)] == [0, 1]
    assert [p.vc(Flit.request(c, 0, 0)) for c in range(3)] == [2, 3, 4]
    assert p.vc(Flit.response(2, 0, 0)) == p.resp_vc == 5
    assert [p.vc_kind(v) for v in range(p.vcs)] == [Kind.P2P] * 2 + [Kind.REQ] * 3 + [Kind.RESP]


def test_vc_of_matches_python():
    p = FlitParams(collective_ids=3, p2p_vcs=3)
    sig = Signal(p.layout)
    vc, ok = Signal(8), Signal()
    m = Module()
    m.d.comb += [vc.eq(p.vc_of(sig)), ok.eq(p.vc_valid(sig))]
    rng = random.Random(3)
    cases = [random_flit(rng, p) for _ in range(100)]

    async def bench(ctx):
        for flit in cases:
            ctx.set(sig.as_value(), p.pack(flit))
            assert ctx.get(vc) == p.vc(flit)
            assert ctx.get(ok) == 1
        # Out-of-range ids and hops name no VC.
        ctx.set(sig.as_value(), p.pack(Flit.request(0, 0, 0)) | (3 << p.offsets["cid"]))
        assert ctx.get(ok) == 0
        ctx.set(sig.as_value(), p.pack(Flit.p2p(0, 0, 0)) | (3 << p.offsets["hop"]))
        assert ctx.get(ok) == 0
        ctx.set(sig.as_value(), 3 << p.offsets["kind"])
        assert ctx.get(ok) == 0

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


def test_signatures():
    p = FlitParams()
    link = link_signature(p)
    assert set(link.members.keys()) == {"valid", "payload", "credit"}
    assert link.members["credit"].shape == p.vcs
    assert stream_signature(p).members["payload"].shape == p.layout


def test_bits_for():
    assert [bits_for(n) for n in (1, 2, 3, 4, 5, 64, 65)] == [1, 1, 2, 2, 3, 6, 7]


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"payload_width": 0}, ValueError, "Payload width must be between 1 and 1024, not 0"),
    ({"payload_width": "32"}, TypeError, "Payload width must be an integer, not '32'"),
    ({"routing_depth": 0}, ValueError, "Routing depth must be between 1 and 65536, not 0"),
    ({"collective_ids": 0}, ValueError, "Collective ids must be between 1 and 256, not 0"),
    ({"p2p_vcs": 0}, ValueError, "p2p virtual channels must be between 1 and 16, not 0"),
    ({"index_width": 33}, ValueError, "Index width must be between 1 and 32, not 33"),
    ({"tag_width": True}, TypeError, "Tag width must be an integer, not True"),
    ({"payload_width": 1 << 5000}, ValueError,
     "Payload width must be between 1 and 1024, not a 5001-bit integer"),
])
def test_param_errors(kwargs, error, message):
    with pytest.raises(error, match=rf"^{message}$"):
        FlitParams(**kwargs)


def test_pack_errors():
    p = FlitParams()
    with pytest.raises(ValueError, match=r"^Flit field payload must be between 0 and 4294967295, "
                                         r"not 4294967296$"):
        p.pack(Flit.p2p(0, 0, 1 << 32))
    with pytest.raises(ValueError, match=r"^Collective id must be between 0 and 3, not 4$"):
        p.pack(Flit.request(4, 0, 0))
    with pytest.raises(ValueError, match=r"^Hop must be between 0 and 1, not 2$"):
        p.pack(Flit.p2p(0, 0, 0, hop=2))
    with pytest.raises(TypeError, match=r"^Expected a Flit, not 3$"):
        p.pack(3)
    with pytest.raises(TypeError, match=r"^Flit field index must be an integer, not 1.5$"):
        p.pack(Flit.p2p(0, 0, 0, index=1.5))
    with pytest.raises(TypeError, match=r"^Flit field cid must be an integer, not None$"):
        p.pack(Flit(Kind.REQ, cid=None))
    with pytest.raises(ValueError, match=r"^Hop must be between 0 and 1, not a 16610-bit "
                                         r"integer$"):
        p.pack(Flit(Kind.P2P, hop=10**5000))
    with pytest.raises(ValueError, match=r"^Flit word must be between 0 and 2\*\*73 - 1, not -1$"):
        p.unpack(-1)
    with pytest.raises(TypeError, match=r"^Expected an integer flit, not 'x'$"):
        p.unpack("x")
    with pytest.raises(ValueError, match=r"^Flit kind 3 is not a packet class$"):
        p.unpack(3 << p.offsets["kind"])
    with pytest.raises(ValueError, match=r"^Virtual channel must be between 0 and 6, not 7$"):
        p.vc_kind(7)


def test_numpy_integers_are_kept_as_ints():
    import numpy as np

    params = FlitParams(payload_width=np.int64(16), collective_ids=np.uint8(2))
    assert params == FlitParams(payload_width=16, collective_ids=2)
    assert type(params.payload_width) is int
    assert type(params.collective_ids) is int
