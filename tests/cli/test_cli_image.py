# amaranth: UnusedElaboratable=no
"""``innet image build | inspect | validate | check``."""

import json
import re

import pytest
from click.testing import CliRunner
from image_samples import mesh, reseal, sample, shortest_routes

from innet.gen.embed import embed
from innet.gen.image import build_image, decode, embeddings, encode
from innet.gen.routing import routing
from innet.gen.swing import build_schedule
from innet.gen.topology import polarfly, torus
from innet.sim.cli import main


def run(*args):
    done = CliRunner().invoke(main, ["image", *map(str, args)])
    return done.exit_code, done.output




@pytest.mark.parametrize("args", [["polarfly", "--q", "3", "--embed", "allreduce",
                                   "--swing", "ring", "--elements", "26"],
                                  ["torus", "--shape", "4x4", "--routing-depth", "64",
                                   "--collective-ids", "2"]])
def test_the_maps_are_those_of_the_hardware_of_the_same_sizes(tmp_path, args):
    """The map digests an image stores are those of the switch and the endpoint RTL built
    with the image's sizes (a loader refuses an image whose digests are not its hardware's)."""
    from innet.hw.endpoint import Endpoint
    from innet.hw.flit import FlitParams
    from innet.hw.switch import Switch

    code, text = run("build", *args, "-o", tmp_path / "net.img")
    assert code == 0, text
    p = decode((tmp_path / "net.img").read_bytes()).params
    switch = Switch(p.radix, collective_ids=p.collective_ids, routing_depth=p.routing_depth)
    endpoint = Endpoint(FlitParams(collective_ids=p.collective_ids,
                                   routing_depth=p.routing_depth),
                        step_depth=p.step_depth, vector_depth=p.vector_depth)
    assert p.switch_map.digest == switch.regmap.digest
    assert p.endpoint_map.digest == endpoint.regmap.digest


def test_build_matches_the_api(tmp_path):
    out = tmp_path / "net.img"
    code, text = run("build", "polarfly", "--q", 3, "--embed", "allreduce", "--embed",
                       "reduce:root=4:participants=1,4,7,9:op=max:dtype=fp32", "--swing",
                       "swing-l", "--elements", 64, "-o", out)
    assert code == 0, text
    topo = polarfly(3)
    expected = build_image(topo, routes=routing(topo), embeddings=[
        embed(topo), embed(topo, [1, 4, 7, 9], root=4, kind="reduce", op="max",
                           dtype="fp32", collective_id=1)],
        schedule=build_schedule("swing-l", 13), elements=64)
    data = out.read_bytes()
    assert data == encode(expected)
    assert text == (f"wrote {out}: bin image of PolarFly q=3 (13 switches + 13 endpoints), "
                    f"collective ids 0, 1, step tables from swing-l; "
                    f"{expected.write_count:,} writes, {len(data) / 1024:,.1f} KiB, CRC "
                    f"{expected.header.crc32:#010x}\n")


@pytest.mark.parametrize(("name", "options", "fmt"), [
    ("net.hex", [], "hex"), ("net.mem", [], "hex"), ("net.json", [], "json"),
    ("net.img", [], "bin"), ("net.out", [], "bin"), ("net.img", ["--format", "json"], "json")])
def test_format_follows_the_suffix(tmp_path, name, options, fmt):
    out = tmp_path / name
    code, text = run("build", "torus", "--shape", "4", "--no-routes", *options, "-o", out)
    assert code == 0, text
    expected = build_image(torus((4,)), elements=1024)
    assert decode(out.read_bytes()) == expected
    assert out.read_bytes() == (lambda d: d if isinstance(d, bytes) else d.encode())(
        encode(expected, fmt))


def test_build_json_summary_and_parameters(tmp_path):
    code, text = run("build", "hyperx", "--shape", "3x3", "--swing", "ring", "--elements",
                       10, "--collective-ids", 4, "--step-depth", 64, "--vector-depth", 32,
                       "--routing-depth", 16, "--node-id-width", 8, "--radix", 6,
                       "-o", tmp_path / "h.img", "--json")
    assert code == 0, text
    summary = json.loads(text)
    assert summary["params"] == {"radix": 6, "collective_ids": 4, "routing_depth": 16,
                                 "step_depth": 64, "vector_depth": 32, "node_id_width": 8}
    assert summary["schedule"] == "ring"
    assert summary["collective_ids_used"] == []
    assert decode((tmp_path / "h.img").read_bytes()).params.as_dict() == summary["params"]


def test_embedding_and_schedule_files_from_their_commands(tmp_path):
    for args in (["embed", "polarfly", "--q", "3", "--participants", "0-5",
                  "--collective-id", "1", "-o", tmp_path / "emb"],
                 ["swing", "polarfly", "--q", "3", "--algo", "ring",
                  "-o", tmp_path / "sw"]):
        done = CliRunner().invoke(main, list(map(str, args)))
        assert done.exit_code == 0, done.output
    code, text = run("build", "polarfly", "--q", 3, "--embed", tmp_path / "emb",
                       "--embed", "broadcast:root=2", "--swing", tmp_path / "sw/schedule.json",
                       "--elements", 26, "-o", tmp_path / "x.json")
    assert code == 0, text
    image = decode((tmp_path / "x.json").read_text())
    found = {e.collective_id: e for e in embeddings(image)}
    assert sorted(found) == [0, 1]
    assert found[1].participants == (0, 1, 2, 3, 4, 5)
    assert (found[0].kind, found[0].root) == ("broadcast", 2)


def test_validate(tmp_path):
    path = tmp_path / "net.img"
    path.write_bytes(encode(sample()))
    code, text = run("validate", path)
    assert code == 0
    assert text == (f"{path}: valid (bin, format 1): 6 switches and 6 endpoints, collective "
                    f"ids 0, step tables of up to 2 entries, CRC {sample().header.crc32:#010x}\n")
    code, text = run("validate", path, "--json")
    assert code == 0
    data = json.loads(text)
    assert (data["valid"], data["error"], data["collective_ids_used"]) == (True, None, [0])


def test_validate_rejects_with_one_line(innet, tmp_path):
    path = tmp_path / "bad.img"
    data = bytearray(encode(sample()))
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    done = innet("image", "validate", path)
    assert done.returncode == 1
    assert done.stdout == ""
    assert re.fullmatch(rf"innet: error: {re.escape(str(path))}: Header: CRC mismatch: the "
                        r"header says 0x[0-9a-f]{8}, the image gives 0x[0-9a-f]{8}\n",
                        done.stderr)
    code, text = run("validate", path, "--json")
    assert code == 1
    assert json.loads(text)["valid"] is False


def test_inspect_tables(innet, tmp_path):
    path = tmp_path / "net.hex"
    path.write_text(encode(sample(), "hex"))
    done = innet("image", "inspect", path, "--steps", "--routes")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (f"{path}: innet configuration image, format 1 (hex), CRC "
                        f"{sample().header.crc32:#010x}")
    assert ("  parameters  radix 3, collective-id slots 2, routing depth 8, step depth 4, vector "
            "depth 16, node-id width 3") in lines
    root = next(line for line in lines if re.match(r"\s+1 │", line))
    assert re.split(r"\s*│\s*", root.strip()) == ["1", "6/6", "0", "add", "int32",
                                                   "{0,1,2,local}", "root", "-",
                                                   "{0,1,2,local}"]
    table = shortest_routes(mesh())
    shown = " ".join(f"{d}:{'local' if table[1, d] < 0 else table[1, d]}" for d in range(6))
    assert f"  switch 1 routes  {shown}" in lines
    assert "endpoint 3 step table" in done.stdout


def test_inspect_json_matches_the_registers(tmp_path):
    path = tmp_path / "net.img"
    path.write_bytes(encode(sample()))
    code, text = run("inspect", path, "--json")
    assert code == 0
    data = json.loads(text)
    root = data["switches"][1]["collectives"][0]
    assert root == {"collective_id": 0, "op": "add", "dtype": "int32", "root": True,
                    "req_in": [0, 1, 2, "local"], "req_out": None, "resp_in": None,
                    "resp_out": [0, 1, 2, "local"]}
    assert data["endpoints"][3]["step_table"][0] == {
        "step": 0, "cid": 0, "reduce": True, "send": {"peer": 0, "elements": [0, 4]},
        "recv": {"peer": 0, "elements": [4, 8]}}


def test_inspect_force_shows_an_invalid_image(innet, tmp_path):
    from image_samples import set_register

    bad = set_register(sample(), 4, "coll[0].req_out", {"root": 1})
    path = tmp_path / "bad.img"
    path.write_bytes(reseal(encode(bad)))
    code, text = run("inspect", path)
    assert code == 2
    message = ("Switch 1 (target 1), coll[0].req_in.ports: takes requests on port 0 from node "
               "4, which is the root")
    assert text == f"innet: error: {path}: {message}\n"
    done = innet("image", "inspect", path, "--force")
    assert done.returncode == 1
    assert f"  INVALID     {message}" in done.stdout.splitlines()
    assert done.stderr == f"innet: error: {path}: {message}\n"
    # The same verdict as JSON: the report on stdout, and the same exit status.
    done = innet("image", "inspect", path, "--force", "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert (report["valid"], report["error"]) == (False, message)


@pytest.mark.parametrize(("args", "message"), [
    (["polarfly"], "polarfly needs --q"),
    (["polarfly", "--q", "3", "--shape", "3x3"],
     "--shape does not apply to polarfly, which takes --q, --r0, --r1"),
    (["torus"], "torus needs --shape, such as 4x4"),
    (["hyperx", "--shape", "3x3", "--q", "3", "--r0", "1"],
     "--q, --r0 do not apply to hyperx, which takes --shape"),
    (["hyperx", "--shape", "3x3", "--mesh"],
     "--mesh does not apply to hyperx, which takes --shape"),
    (["piuma", "--nodes", "2", "--shape", "3x3"],
     ("--shape does not apply to piuma, which takes --nodes, --sockets, --cores, --core-mesh, "
      "--placement, --latency-core, --latency-socket, --latency-node")),
    (["torus", "--shape", "4x4", "--embed", "gather"],
     ("--embed must start with one of allreduce, reduce, broadcast, barrier (or be an embedding "
     "JSON file), not 'gather'")),
    (["torus", "--shape", "4x4", "--embed", "allreduce:depth=2"],
     ("--embed items must be key=value with a key of root, participants, id, op, dtype, not "
     "'depth=2'")),
    (["torus", "--shape", "4x4", "--embed", "allreduce:id=x"],
     "--embed id must be a non-negative integer, not 'x'"),
    (["torus", "--shape", "4x4", "--embed", "allreduce:root=-1"],
     "--embed root must be a non-negative integer or auto, not '-1'"),
    (["torus", "--shape", "4x4", "--embed", "allreduce:root=16"],
     "--embed root names node 16, outside 0..15"),
    (["torus", "--shape", "4x4", "--embed", f"allreduce:root={'9' * 5000}"],
     f"--embed root names node {'9' * 40}, outside 0..15"),
    (["torus", "--shape", "4x4", "--embed", f"allreduce:id={'9' * 5000}"],
     f"Collective id must be between 0 and 255, not {'9' * 40}"),
    (["torus", "--shape", "4x4", "--embed", "allreduce:participants=0-99999999999"],
     "--embed participants names node 99999999999, outside 0..15"),
    (["torus", "--shape", "4x4", "--elements", "4G"],
     "--elements must be at most 1,048,576, not '4G'"),
    (["torus", "--shape", "4x4", "--swing", "tree"],
     ("--swing must be one of swing-b, swing-l, recdoub-b, recdoub-l, ring, bucket or a "
     "schedule JSON file, not 'tree'")),
    (["torus", "--shape", "4x4", "--swing", "swing-b", "--step-depth", "3"],
     "Endpoint 0's step table of 32 entries exceeds the step depth 3"),
    (["torus", "--shape", "4x4", "--embed", "allreduce", "--embed", "allreduce:id=0"],
     ("Collective id 0: switch 0 is configured by two embeddings, but it has one register copy "
     "per id")),
])
def test_build_errors_are_one_line_and_write_nothing(innet, tmp_path, args, message):
    done = innet("image", "build", *args, "-o", "net.img", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {message}\n"
    assert list(tmp_path.iterdir()) == []


def test_inspect_force_names_the_image_whose_parameters_have_no_register_map(innet, tmp_path):
    assert innet("image", "build", "polarfly", "--q", "2", "-o", tmp_path / "im.json",
                 ).returncode == 0
    data = json.loads((tmp_path / "im.json").read_text())
    data["params"]["collective_ids"] = 300
    (tmp_path / "im.json").write_text(json.dumps(data))
    done = innet("image", "inspect", "--force", tmp_path / "im.json")
    assert done.returncode == 2
    assert done.stderr == (f"innet: error: {tmp_path / 'im.json'}: Collective ids must be at "
                           f"most 256, not 300\n")
    assert done.stdout == ""


def test_a_bad_schedule_file_is_named(innet, tmp_path):
    (tmp_path / "s.json").write_text('{"format": "innet-swing-schedule"}')
    done = innet("image", "build", "torus", "--shape", "4", "--swing", "s.json", "-o", "net.img",
                 cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("innet: error: s.json: Schedule JSON ")
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_a_schedule_for_another_grid_is_refused(innet, tmp_path):
    schedule = build_schedule("swing-b", (3, 5))
    (tmp_path / "s.json").write_text(schedule.to_json())
    done = innet("image", "build", "torus", "--shape", "5x3", "--swing", "s.json", "-o",
                 "net.img", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("innet: error: s.json: the schedule lays its ranks out as 3x5, but "
                           "this network's are laid out as 5x3\n")
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]
    # The network it was made for takes it, and so does a ring of all ranks on a grid, and a
    # layout with sides of 1 on the network without them.
    for shape, made in (("3x5", (3, 5)), ("3x5", (15,)), ("15", (1, 15)), ("3x5", (3, 1, 5))):
        (tmp_path / "s.json").write_text(build_schedule("ring", made).to_json())
        done = innet("image", "build", "torus", "--shape", shape, "--swing", "s.json", "-o",
                     "net.img", cwd=tmp_path)
        assert done.returncode == 0, done.stderr


def _embedding_json(tmp_path, change):
    """An embedding file of ``innet embed`` on the 4-ring, edited by ``change`` (in place)."""
    data = embed(torus(4)).to_dict()
    data = change(data) or data
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "e.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


NOT_AN_EMBEDDING = ("in/e.json is not an embedding (a JSON object, as `innet embed` writes, "
                    "with its trees as objects)")


@pytest.mark.parametrize(("change", "message"), [
    (lambda data: [data], NOT_AN_EMBEDDING),
    (lambda data: {"trees": [1]}, NOT_AN_EMBEDDING),
    (lambda data: "{bad", ("in/e.json is not JSON: Expecting property name enclosed in double "
                           "quotes: line 1 column 2 (char 1)")),
    (lambda data: "[" * 100_000, "in/e.json is not JSON: nested too deeply"),
    (lambda data: '{"root": ' + "9" * 5000 + "}",
     "in/e.json is not JSON: an integer of 5,000 digits, more than 1,000"),
    (lambda data: data.update(collective_id=-1),
     ("in/e.json: Embedding JSON field 'collective_id' is malformed: collective id -1 is "
      "negative")),
    (lambda data: data.update(topology={"kind": "torus"}),
     "in/e.json: the topology has no 'fingerprint'"),
    (lambda data: data.update(switches=[], root=2), "in/e.json: Root 2 is not configured"),
    (lambda data: data.update(root=99), "in/e.json: Root 99 is outside 0..3"),
    (lambda data: data.update(topology="f" * 64),
     (f"in/e.json: Embedding was made for topology ffffffffffffffff, not "
     f"{torus(4).fingerprint[:16]}")),
])
def test_a_malformed_embedding_file_is_named(innet, tmp_path, change, message):
    path = _embedding_json(tmp_path, change)
    done = innet("image", "build", "torus", "--shape", "4", "--embed", "in/e.json", "-o",
                 "net.img", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, f"innet: error: {message}\n")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["e.json", "in"]
    assert path.exists()


def test_an_empty_embed_is_refused(innet, tmp_path):
    done = innet("image", "build", "torus", "--shape", "4", "--embed", "", "-o", "net.img",
                 cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2, "innet: error: --embed must name an embedding or a JSON file, not ''\n")
    assert list(tmp_path.iterdir()) == []


def test_build_without_an_output_is_a_usage_error(innet, tmp_path):
    done = innet("image", "build", "polarfly", "--q", "2", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "innet: error: Missing option '-o' / '--output'.\n"
    assert list(tmp_path.iterdir()) == []


def test_build_with_failures(tmp_path):
    out = tmp_path / "f.json"
    code, text = run("build", "torus", "--shape", "4x4", "--embed", "allreduce",
                       "--fail-links", "0-1,5-9", "--fail-switches", "10", "-o", out)
    assert code == 0, text
    topo = torus((4, 4))
    failures = {"failed_links": [(0, 1), (5, 9)], "failed_switches": [10]}
    expected = build_image(topo, routes=routing(topo, **failures),
                           embeddings=[embed(topo, **failures)], elements=1024)
    assert out.read_text() == encode(expected, "json")
    code, text = run("build", "torus", "--shape", "4x4", "--no-routes", "--fail-links",
                       "0-1", "-o", tmp_path / "g.img")
    assert code == 0, text
    assert decode((tmp_path / "g.img").read_bytes()).failed_links == ((0, 1),)
    code, text = run("inspect", tmp_path / "g.img")
    assert "  failures    links 0-1; switches none" in text.splitlines()


# -- deadlock check -------------------------------------------------------------------------------

#: Five allreduce ids on a chordless 5-cycle of PolarFly q=3, each rooted one node further on:
#: their response trees close a cycle on the response VC all ids share.
PENTAGON = [0, 1, 5, 9, 10]
PENTAGON_CYCLE = ("Deadlock: cyclic channel dependency 0 -(port 0, VC 7)-> 1 -(port 2, VC 7)-> "
                  "5 -(port 2, VC 7)-> 9 -(port 2, VC 7)-> 10 -(port 0, VC 7)-> 0; VC 7 = "
                  "responses of every id; from collective ids 0, 1, 2, 3, 4")


def _pentagon_specs():
    ring = PENTAGON
    return [f"allreduce:root={ring[i]}:participants="
            + ",".join(str(ring[(i + j) % 5]) for j in range(3)) for i in range(5)]


def test_build_refuses_a_configuration_that_can_deadlock(innet, tmp_path):
    args = [a for spec in _pentagon_specs() for a in ("--embed", spec)]
    done = innet("image", "build", "polarfly", "--q", "3", *args, "-o", "net.img", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"innet: error: {PENTAGON_CYCLE}\n"
    assert list(tmp_path.iterdir()) == []
    code, text = run("build", "polarfly", "--q", 3, *args[:8], "-o", tmp_path / "four.img")
    assert code == 0, text


def test_build_refuses_detours_longer_than_the_vcs(innet, tmp_path):
    done = innet("image", "build", "polarfly", "--q", "3", "--fail-links",
                 "2-4,9-10,2-3,6-11", "-o", "net.img", cwd=tmp_path)
    assert done.returncode == 2
    assert re.fullmatch(r"innet: error: Deadlock: cyclic channel dependency 0 -\(port 0, VC 1\)"
                        r"-> 1 .*-> 0; VC 1 = p2p hops 1 and up; from routes toward nodes "
                        r"[0-9, ]+ and \d+ more\n", done.stderr)
    assert list(tmp_path.iterdir()) == []


def test_check_accepts_an_acyclic_image(tmp_path):
    path = tmp_path / "net.img"
    path.write_bytes(encode(sample()))
    code, text = run("check", path)
    assert code == 0, text
    assert text == (f"{path}: free of deadlock: the channel-dependency graph of the routes "
                    f"(3 hop-indexed p2p VCs) and collective ids 0 is acyclic (29 dependencies "
                    f"among 32 channels)\n")


def test_check_reports_the_cycle_of_an_image(innet, tmp_path):
    topo = polarfly(3)
    made = [embed(topo, [PENTAGON[(i + j) % 5] for j in range(3)], root=PENTAGON[i],
                  collective_id=i) for i in range(5)]
    path = tmp_path / "net.json"
    path.write_text(encode(build_image(topo, routes=routing(topo), embeddings=made,
                                       elements=8, check_deadlock=False), "json"))
    done = innet("image", "check", path, "-o", tmp_path / "cdg.graphml")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == f"innet: error: {path}: {PENTAGON_CYCLE}\n"
    import networkx as nx

    graph = nx.read_graphml(tmp_path / "cdg.graphml")
    on = sorted((d["node"], d["port"], d["vc"]) for _v, d in graph.nodes(data=True)
                if d["on_cycle"])
    assert on == [(0, 0, 7), (1, 2, 7), (5, 2, 7), (9, 2, 7), (10, 0, 7)]
    code, text = run("check", path, "--json")
    assert code == 1
    data = json.loads(text)
    assert (data["deadlock_free"], data["error"], data["p2p_vcs"]) == (False, PENTAGON_CYCLE, 2)
    assert data["collective_ids_used"] == [0, 1, 2, 3, 4]
    assert data["cycle"][0] == {"node": 0, "port": 0, "peer": 1, "vc": 7,
                                "vc_name": "responses of every id"}


def test_check_rejects_an_invalid_image_first(tmp_path):
    path = tmp_path / "bad.img"
    data = bytearray(encode(sample()))
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    code, text = run("check", path)
    assert code == 2
    assert text.startswith(f"innet: error: {path}: Header: CRC mismatch")


def test_build_sets_the_collective_watchdog_of_every_switch(innet, tmp_path):
    """--coll-timeout lands in every switch's coll_timeout register (decoded by the loader's
    decoder); without it the watchdog is off; out of range is one line, exit 2."""
    from innet.gen.image import decode

    for timeout in (0, 1000, 0xFFFF):
        out = tmp_path / f"net{timeout}.img"
        args = ["image", "build", "torus", "--shape", "3x3", "-o", str(out)]
        result = innet(*args, *(["--coll-timeout", str(timeout)] if timeout else []))
        assert result.returncode == 0, result.stderr
        image = decode(out.read_bytes())
        assert {image.values(t)["coll_timeout"]["cycles"] for t in image.switches()} == {timeout}
    bad = innet("image", "build", "torus", "--shape", "3x3", "--coll-timeout", "65536",
                "-o", str(tmp_path / "bad.img"))
    assert bad.returncode == 2
    assert "--coll-timeout" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "bad.img").exists()


def test_build_sets_the_p2p_floor_of_every_switch(innet, tmp_path):
    """--coll-burst lands in every switch's coll_burst register, decoded by the loader's
    decoder; out of range is one line, exit 2, nothing written."""
    from innet.gen.image import decode
    from innet.gen.regmap.switch import COLL_BURST

    for burst in (COLL_BURST, 0, 15):
        out = tmp_path / f"net{burst}.img"
        args = ["image", "build", "torus", "--shape", "3x3", "-o", str(out)]
        result = innet(*args, *(["--coll-burst", str(burst)] if burst != COLL_BURST else []))
        assert result.returncode == 0, result.stderr
        image = decode(out.read_bytes())
        assert {image.values(t)["coll_burst"]["cycles"] for t in image.switches()} == {burst}
    bad = innet("image", "build", "torus", "--shape", "3x3", "--coll-burst", "16",
                "-o", str(tmp_path / "bad.img"))
    assert bad.returncode == 2
    assert "--coll-burst" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "bad.img").exists()
