"""The disk cache of generated Verilog (innet.sim.designcache) and the networks that use it."""

from __future__ import annotations

import pytest

from innet.hw.verilog import Design
from innet.sim import designcache
from innet.sim.designcache import cached_design, source_digest


def _design(tag: str) -> Design:
    return Design(f"module top;\n  // {tag}\nendmodule\n", "top", {"ports": tag})


class _Maker:
    """A generator that counts its calls and returns a design naming the call."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> Design:
        self.calls += 1
        return _design(f"call {self.calls}")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("INNET_CACHE", str(tmp_path))
    return tmp_path / "designs"


def test_second_request_is_served_from_disk(cache):
    make = _Maker()
    first = cached_design("top", {"radix": 4}, make)
    again = cached_design("top", {"radix": 4}, make)
    assert make.calls == 1
    assert again == first
    assert again.ports == first.ports == {"ports": "call 1"}
    assert sorted(p.suffix for p in cache.iterdir()) == [".json", ".lock", ".v"]


def _generate_slowly(log: str) -> Design:
    import time

    with open(log, "a") as out:
        out.write("generated\n")
    time.sleep(0.5)  # the other processes ask for the entry meanwhile
    return _design("slow")


def _request(log: str, start, results) -> None:
    start.wait()  # every process asks at the same moment
    results.put(cached_design("top", {"radix": 4}, lambda: _generate_slowly(log)).ports)


def test_processes_asking_at_once_generate_the_entry_once(cache, tmp_path):
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # the children inherit INNET_CACHE
    log, start, results = tmp_path / "generated.log", context.Barrier(3), context.Queue()
    workers = [context.Process(target=_request, args=(str(log), start, results))
               for _ in range(3)]
    for worker in workers:
        worker.start()
    ports = [results.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    assert ports == [{"ports": "slow"}] * 3
    assert log.read_text() == "generated\n"


def test_other_parameters_or_name_generate_afresh(cache):
    make = _Maker()
    cached_design("top", {"radix": 4}, make)
    assert cached_design("top", {"radix": 8}, make).ports == {"ports": "call 2"}
    assert cached_design("other", {"radix": 4}, make).ports == {"ports": "call 3"}
    # Key order does not matter; tuples and lists are the same JSON.
    assert cached_design("top", {"radix": 4, "stages": (1, 2)}, make).ports == {"ports": "call 4"}
    assert cached_design("top", {"stages": [1, 2], "radix": 4}, make).ports == {"ports": "call 4"}


def test_a_source_change_generates_afresh(cache, monkeypatch):
    make = _Maker()
    cached_design("top", {}, make)
    monkeypatch.setattr(designcache, "source_digest", lambda: "another version of the code")
    assert cached_design("top", {}, make).ports == {"ports": "call 2"}
    assert make.calls == 2


def test_an_entry_without_its_metadata_is_generated_again(cache):
    make = _Maker()
    cached_design("top", {}, make)
    (meta,) = cache.glob("*.json")
    meta.unlink()
    assert cached_design("top", {}, make).ports == {"ports": "call 2"}
    assert not list(cache.glob(".*")), "a temporary file was left behind"


def test_only_the_newest_entries_of_a_name_are_kept(cache, monkeypatch):
    import time

    monkeypatch.setattr(designcache, "KEEP", 3)
    make = _Maker()
    cached_design("top-level", {}, make)  # another name that starts like this one
    for radix in range(5):
        time.sleep(0.02)  # distinct modification times
        cached_design("top", {"radix": radix}, make)
    assert len(list(cache.glob("top-level-*.v"))) == 1
    assert len(list(cache.glob("top-*.json"))) == 4
    # The newest three are served from the cache, the oldest two are generated again.
    for radix in (4, 3, 2):
        cached_design("top", {"radix": radix}, make)
    assert make.calls == 6
    cached_design("top", {"radix": 0}, make)
    assert make.calls == 7


def test_source_digest_covers_every_generating_package(tmp_path, monkeypatch):
    import shutil

    # Copies of the three packages stand in for the installed ones; the digest must change
    # with an edit to any of them, in a top-level module or a nested one, and with a new module.
    copies = {}
    for name in ("innet.hw", "innet.gen", "innet.sim"):
        copies[name] = tmp_path / name
        shutil.copytree(designcache._package_root(name), copies[name],
                        ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(designcache, "_package_root", copies.__getitem__)
    digest = source_digest.__wrapped__
    seen = [digest()]
    assert len(seen[0]) == 64
    assert digest() == seen[0]
    for root in copies.values():
        for module in (root / "__init__.py", max(root.rglob("*.py"), key=lambda p: len(p.parts))):
            module.write_bytes(module.read_bytes() + b"\n")
            seen.append(digest())
    (copies["innet.sim"] / "added.py").write_text("")
    seen.append(digest())
    assert len(set(seen)) == len(seen) == 8


def test_bad_parameters_and_generators_are_refused(cache):
    with pytest.raises(TypeError, match="mapping"):
        cached_design("top", [("radix", 4)], _Maker())
    with pytest.raises(TypeError, match="JSON-serialisable"):
        cached_design("top", {"topology": object()}, _Maker())
    with pytest.raises(TypeError, match="must return a Design"):
        cached_design("top", {}, lambda: "module top; endmodule")
    # No entry written (the generator's lock file may stay: it holds no design).
    assert not cache.exists() or {p.suffix for p in cache.iterdir()} <= {".lock"}


def test_cached_network_matches_a_fresh_conversion(cache, monkeypatch):
    """The network simulate and the demo use, served from the cache, is the Verilog a fresh
    conversion gives, with the same ports; a different size is a different entry."""
    from innet.gen.topology import hyperx
    from innet.hw.network import Network, emit_network
    from innet.sim.network import _mark_used, cached_network

    topo = hyperx((2, 2))
    sizes = {"vector_depth": 8, "step_depth": 4}
    first, top = cached_network(Network, topo, "innet_network_hyperx4", **sizes)
    again, _top = cached_network(Network, topo, "innet_network_hyperx4", **sizes)
    fresh, _fresh_top = emit_network(topo, **sizes)
    assert isinstance(top, Network)
    assert first.verilog == again.verilog == fresh.verilog
    assert again.ports == fresh.ports
    assert again.toplevel == fresh.toplevel
    assert len(list(cache.glob("*.v"))) == 1
    # Another size is another entry (converted by a stand-in: the key is what is tested).
    converted = []
    monkeypatch.setattr("innet.hw.network.network_verilog",
                        lambda top, name: converted.append(top) or _mark_used(top) or fresh)
    cached_network(Network, topo, "innet_network_hyperx4", vector_depth=16, step_depth=4)
    assert len(converted) == 1
    assert converted[0].sizes()["vector_depth"] == 16
    assert len(list(cache.glob("*.v"))) == 2
