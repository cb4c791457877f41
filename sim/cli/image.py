"""``innet image``: build, inspect and validate network configuration images.

    innet image build polarfly --q 3 [--embed SPEC ...] [--swing ALGO|FILE] -o net.img
    innet image build torus --shape 4x4 [--mesh] ...     innet image build hyperx --shape 3x3 ...
    innet image build piuma --nodes 2 --sockets 2 --cores 4 ...
    innet image inspect net.img [--steps] [--routes] [--force] [--json]
    innet image validate net.img [--json]
    innet image check net.img [-o cdg.graphml] [--json]

``--embed`` configures one in-network collective per use, on the next free collective id:
``KIND[:key=value...]`` with kind ``allreduce``, ``reduce``, ``broadcast`` or ``barrier`` and
keys ``root`` (``auto`` or a node), ``participants`` (``0-7,9``), ``id``, ``op``, ``dtype``;
or the path of an embedding JSON written by ``innet embed -o DIR`` (``DIR/embedding.json``).
``--swing`` fills the endpoints' step tables from ``swing-b``, ``swing-l``, ``recdoub-b``,
``recdoub-l``, ``ring`` or ``bucket`` (ranks laid out on the torus or HyperX shape, or as a
ring of all nodes on PolarFly and PIUMA), or from a schedule JSON written by ``innet swing -o
DIR`` (a schedule laid out on a grid must be laid out as the network is; a ring fits any).

``build`` refuses, and ``check`` reports, a configuration that can deadlock: one whose
channel-dependency graph (:mod:`innet.gen.deadlock`: the routing tables with their hop-indexed
p2p VCs, and the collective trees of every enabled id) has a cycle. The p2p VCs are taken as
the topology's diameter, the fewest the network RTL accepts; more VCs only remove
dependencies, so an image that passes is free of deadlock on any network RTL it loads on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from innet.gen.checks import parse_whole
from innet.gen.regmap.endpoint import MAX_VECTOR_DEPTH
from innet.gen.regmap.switch import COLL_BURST, COLL_TIMEOUT, MAX_COLLECTIVE_IDS
from innet.sim.cli._common import (
    FAILED,
    console,
    fail,
    json_option,
    output_option,
    print_json,
    write_atomic,
)
from innet.sim.cli._options import (
    dtype_option,
    fitted_option,
    op_option,
    topology_from_args,
    topology_options,
)
from innet.sim.cli._parse import SIZE_GRAMMAR, Size, node_id, parse_links, parse_node_ids

__all__ = ["command", "parse_embed"]

_EMBED_KEYS = ("root", "participants", "id", "op", "dtype")


def parse_embed(text: str, *, nodes: int) -> dict[str, Any]:
    """``"reduce:root=4:participants=1,4,7:id=2"`` -> ``{"kind": "reduce", "root": 4, ...}``.

    Raises
    ------
    ValueError
        On an unknown kind or key, a malformed value, or a node outside ``0..nodes-1``.
    """
    from innet.gen.embed import KINDS

    kind, *items = text.split(":")
    if kind not in KINDS:
        raise ValueError(f"--embed must start with one of {', '.join(KINDS)} (or be an "
                         f"embedding JSON file), not {kind!r}")
    spec: dict[str, Any] = {"kind": kind}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in _EMBED_KEYS:
            raise ValueError(f"--embed items must be key=value with a key of "
                             f"{', '.join(_EMBED_KEYS)}, not {item!r}")
        if key == "participants":
            spec[key] = parse_node_ids(value, "--embed participants", nodes=nodes)
        elif key in ("id", "root") and not (key == "root" and value == "auto"):
            if not (value.isdigit() and value.isascii()):
                raise ValueError(f"--embed {key} must be a non-negative integer"
                                 f"{' or auto' if key == 'root' else ''}, not {value!r:.60}")
            if key == "root":
                spec[key] = node_id(value, "--embed root", nodes)
            else:
                spec[key] = parse_whole(value, "Collective id", high=MAX_COLLECTIVE_IDS - 1)
        else:
            spec[key] = value
    return spec


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a directory; False for a name the system cannot look up (such as
    one too long), which is then read as an embedding specification."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _embeddings(topo, specs: tuple[str, ...], op: str, dtype: str,
                failures: dict[str, Any]) -> list[Any]:
    from innet.gen.embed import embed

    made, taken = [], set()
    for text in specs:
        if not text.strip():
            raise ValueError("--embed must name an embedding or a JSON file, not ''")
        path = Path(text)
        if text.endswith(".json") or _is_dir(path):
            source = path / "embedding.json" if _is_dir(path) else path
            made += _embedding_file(source, topo)
            taken.update(e.collective_id for e in made)
            continue
        spec = parse_embed(text, nodes=topo.nodes)
        cid = spec.pop("id", None)
        if cid is None:
            cid = next(c for c in range(len(taken) + 1) if c not in taken)
        taken.add(cid)
        made.append(embed(topo, spec.pop("participants", None), root=spec.pop("root", "auto"),
                          kind=spec.pop("kind"), op=spec.pop("op", op),
                          dtype=spec.pop("dtype", dtype), collective_id=cid, **failures))
    return made


def _embedding_file(source: Path, topo) -> list[Any]:
    """The embeddings of a JSON file as `innet embed` writes it (one tree, or ``trees``),
    verified on ``topo``."""
    from innet.gen.embed import Embedding, verify
    from innet.gen.jsonio import load_json

    try:
        data = load_json(source.read_text())
    except ValueError as error:
        raise ValueError(f"{source} is not JSON: {error}") from None
    trees = data.get("trees", [data]) if isinstance(data, dict) else None
    if not isinstance(trees, list) or not all(isinstance(tree, dict) for tree in trees):
        raise ValueError(f"{source} is not an embedding (a JSON object, as `innet embed` "
                         f"writes, with its trees as objects)")
    head = data.get("topology")  # `innet embed` writes a description, not the digest
    made = []
    for tree in trees:
        described = tree.get("topology", head)
        if isinstance(described, dict):
            if "fingerprint" not in described:
                raise ValueError(f"{source}: the topology has no 'fingerprint'")
            tree = {**tree, "topology": described["fingerprint"]}
        try:
            made.append(Embedding.from_dict(tree))
            verify(made[-1], topo)
        except ValueError as error:
            raise ValueError(f"{source}: {error}") from None
    return made


def _schedule(text: str | None, layout: tuple[int, ...]):
    if text is None:
        return None
    from innet.gen.swing import ALGORITHMS, Schedule, build_schedule

    if text in ALGORITHMS:
        return build_schedule(text, layout)
    path = Path(text)
    if path.is_dir():
        path = path / "schedule.json"
    if path.suffix == ".json" or path.exists():
        try:
            schedule = Schedule.from_json(path.read_text())
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
        # Rank r runs on node r: a grid schedule's peers are neighbours only in its own layout.
        # (A ring of all ranks, a 1-D layout, fits any network; sides of 1 change nothing.)
        grid = tuple(d for d in schedule.shape if d != 1)
        if len(grid) > 1 and grid != tuple(d for d in layout if d != 1):
            def shape(dims):
                return "x".join(map(str, dims))
            raise ValueError(f"{path}: the schedule lays its ranks out as {shape(schedule.shape)}, "
                             f"but this network's are laid out as {shape(layout)}")
        return schedule
    raise ValueError(f"--swing must be one of {', '.join(ALGORITHMS)} or a schedule JSON "
                     f"file, not {text!r}")


def _size(count: int) -> str:
    return f"{count:,} bytes" if count < 10_000 else f"{count / 1024:,.1f} KiB"


@click.group("image")
def command() -> None:
    """Build, inspect, validate and check (for deadlock) network configuration images."""


@command.command("build")
@topology_options
@click.option("--embed", "embed_specs", multiple=True, metavar="SPEC|FILE",
              help="An in-network collective, e.g. allreduce or reduce:root=4:participants=0-5"
                   ":id=1 (repeatable), or an embedding JSON from `innet embed -o`.")
@click.option("--swing", "swing", default=None, metavar="ALGO|FILE",
              help="Endpoint step tables from a schedule: swing-b, swing-l, recdoub-b, "
                   "recdoub-l, ring, bucket, or a schedule JSON from `innet swing -o`.")
@click.option("--elements", type=Size(high=MAX_VECTOR_DEPTH), default=1024, show_default=True,
              help=f"Vector length of every endpoint ({SIZE_GRAMMAR}).")
@op_option
@dtype_option
@click.option("--routes/--no-routes", default=True, show_default=True,
              help="Program the p2p routing tables (innet.gen.routing).")
@click.option("--fail-links", default=None, metavar="u-v,...",
              help="Failed links: routes and --embed trees avoid them; the image records them.")
@click.option("--fail-switches", default=None, metavar="LIST",
              help="Failed switches, as --fail-links.")
@click.option("--radix", type=int, default=None, help="Switch radix [topology's].")
@fitted_option("collective_ids", "the fewest that hold the content")
@fitted_option("routing_depth", "the nodes")
@fitted_option("step_depth", "the longest table")
@click.option("--vector-depth", type=Size(), default=None,
              help=f"Endpoint: elements (32-bit) of the vector memory ({SIZE_GRAMMAR}) "
                   f"[--elements].")
@click.option("--node-id-width", type=int, default=None,
              help="Bits of a node id [default: those of the routing depth's node ids, as the "
                   "hardware has them].")
@click.option("--coll-burst", type=click.IntRange(0, 15), default=COLL_BURST, show_default=True,
              help="The p2p floor of every switch: collective flits an output sends in a row "
                   "while a p2p flit waits, at most (0: no limit).")
@click.option("--coll-timeout", type=click.IntRange(0, 0xFFFF), default=COLL_TIMEOUT,
              show_default=True,
              help="The collective watchdog of every switch: cycles a reducing collective id may "
                   "wait for a missing contributor before it is flagged (0: off).")
@click.option("--format", "fmt", type=click.Choice(["bin", "hex", "json"]), default=None,
              help="Encoding [from the -o suffix: .img/.bin, .hex/.mem, .json; else bin].")
@output_option("Write the image to this file.", required=True)
@json_option
def build_command(kind: str, embed_specs: tuple[str, ...], swing: str | None, elements: int,
                  op: str, dtype: str, routes: bool, fail_links: str | None,
                  fail_switches: str | None, radix: int | None, collective_ids: int | None,
                  routing_depth: int | None, step_depth: int | None, vector_depth: int | None,
                  node_id_width: int, coll_burst: int, coll_timeout: int, fmt: str | None,
                  output: Path,
                  as_json: bool, **options: Any) -> None:
    """Build the configuration image of the network of KIND (polarfly, hyperx, torus, piuma):
    every switch and endpoint's registers.

    --op and --dtype are the step engine's and those of every --embed without op= or dtype=.
    """
    from innet.gen.compare import host_shape
    from innet.gen.image import build_image, encode, format_for

    topo = topology_from_args(kind, options)
    name = topo.title
    failures = {"failed_links": parse_links(fail_links, nodes=topo.nodes) if fail_links else [],
                "failed_switches": parse_node_ids(fail_switches, "--fail-switches",
                                                  nodes=topo.nodes) if fail_switches else []}
    made = _embeddings(topo, embed_specs, op, dtype, failures)
    schedule = _schedule(swing, host_shape(topo))
    plan = None
    if routes:
        from innet.gen.routing import routing

        plan = routing(topo, **failures)
    image = build_image(topo, routes=plan, embeddings=made, schedule=schedule,
                        elements=elements, op=op, dtype=dtype, radix=radix,
                        collective_ids=collective_ids, routing_depth=routing_depth,
                        step_depth=step_depth, vector_depth=vector_depth,
                        node_id_width=node_id_width, coll_burst=coll_burst,
                        coll_timeout=coll_timeout, **failures)
    fmt = fmt or format_for(output)
    data = encode(image, fmt)
    write_atomic(output, data)
    size = len(data if isinstance(data, bytes) else data.encode())
    summary = {"output": str(output), "format": fmt, "bytes": size, "network": name,
               "nodes": image.nodes, "targets": image.target_count,
               "writes": image.write_count, "crc32": f"{image.header.crc32:#010x}",
               "fingerprint": image.fingerprint, "params": image.params.as_dict(),
               "collective_ids_used": sorted(e.collective_id for e in made),
               "schedule": schedule.algorithm if schedule is not None else None}
    if as_json:
        print_json(summary)
        return
    used = ", ".join(map(str, summary["collective_ids_used"])) or "none"
    extra = f", step tables from {schedule.algorithm}" if schedule is not None else ""
    click.echo(f"wrote {output}: {fmt} image of {name} ({image.nodes} switches + "
               f"{image.nodes} endpoints), collective ids {used}{extra}; "
               f"{image.write_count:,} writes, {_size(size)}, CRC {summary['crc32']}")


# -- inspect and validate ------------------------------------------------------------------------

def _read(path: Path, check: bool = True):
    from innet.gen.image import ImageError, decode, detect
    from innet.gen.image.binary import from_bytes, from_hex
    from innet.gen.image.jsonform import from_json

    data = path.read_bytes()
    fmt = detect(data)
    try:
        if check:
            return decode(data), fmt
        parse = {"bin": from_bytes, "hex": from_hex, "json": from_json}[fmt]
        return parse(data)[1], fmt
    except ImageError as error:
        fail(f"{path}: {error}")


def _ports(ports) -> str:
    names = ["local" if p < 0 else str(p) for p in sorted(ports, key=lambda p: (p < 0, p))]
    return "{" + ",".join(names) + "}"


def _switch_rows(image, t: int) -> tuple[list[dict[str, Any]], dict[int, int | str]]:
    from innet.gen.regmap import mask_ports

    values = image.values(t)
    radix = image.params.radix
    colls = []
    for c in range(image.params.collective_ids):
        ctrl = values.get(f"coll[{c}].ctrl", {})
        if not ctrl.get("enable"):
            continue
        req_in = mask_ports(values[f"coll[{c}].req_in"]["ports"], radix)
        resp_out = mask_ports(values[f"coll[{c}].resp_out"]["ports"], radix)
        req_out = values[f"coll[{c}].req_out"]
        root = bool(req_out["root"])
        colls.append({"collective_id": c, "op": _name("Op", ctrl["op"]),
                      "dtype": _name("DType", ctrl["dtype"]), "root": root,
                      "req_in": _json_ports(req_in),
                      "req_out": None if root or not req_in else req_out["port"],
                      "resp_in": None if root or not resp_out
                      else values[f"coll[{c}].resp_in"]["port"],
                      "resp_out": _json_ports(resp_out)})
    routes: dict[int, int | str] = {}
    for d in range(image.params.routing_depth):
        entry = values.get(f"route[{d}]")
        if entry and entry["valid"]:
            routes[d] = "local" if entry["port"] == radix else entry["port"]
    return colls, routes


def _name(kind: str, code: int) -> str:
    from innet.gen import ops

    return getattr(ops, kind)(code).name.lower()


def _json_ports(ports) -> list[int | str]:
    return [p for p in ports if p >= 0] + (["local"] if -1 in ports else [])


def _endpoint_data(image, t: int) -> dict[str, Any]:
    values = image.values(t)

    def get(name: str, key: str) -> int:
        return values.get(name, {}).get(key, 0)

    cfg = values.get("engine.cfg", {"steps": 0, "op": 0, "dtype": 0})
    steps = []
    for k in range(cfg["steps"]):
        flags = values.get(f"step[{k}].flags", {})
        step: dict[str, Any] = {"step": k, "cid": flags.get("cid", 0),
                                "reduce": bool(flags.get("reduce"))}
        for way in ("send", "recv"):
            if flags.get(way):
                first = get(f"step[{k}].{way}_first", "index")
                step[way] = {"peer": get(f"step[{k}].{way}_peer", "node"),
                             "elements": [first, first + get(f"step[{k}].{way}_count",
                                                             "count")]}
            else:
                step[way] = None
        steps.append(step)
    return {"node": image.node(t), "vec_base": get("vec_base", "index"),
            "vec_len": get("vec_len", "count"), "steps": len(steps),
            "op": _name("Op", cfg["op"]), "dtype": _name("DType", cfg["dtype"]),
            "step_table": steps}


def _summary(image, path: Path, fmt: str) -> dict[str, Any]:
    header = image.header
    return {"path": str(path), "format": fmt, "version": header.version,
            "crc32": f"{header.crc32:#010x}", "nodes": image.nodes,
            "targets": image.target_count, "writes": image.write_count,
            "params": image.params.as_dict(), "fingerprint": header.fingerprint,
            "switch_map_digest": header.switch_map_digest,
            "endpoint_map_digest": header.endpoint_map_digest,
            "failed_links": [list(link) for link in image.failed_links],
            "failed_switches": list(image.failed_switches),
            "topology": {"kind": image.topology.kind,
                         "params": json.loads(json.dumps(_thaw(image.topology.params))),
                         "links": image.topology.num_links, "radix": image.topology.radix}}


def _thaw(value: Any) -> Any:
    from innet.gen.image.binary import thaw

    return thaw(value)


@command.command("inspect")
@click.argument("path", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--steps", is_flag=True, help="Print every endpoint's step table.")
@click.option("--routes", is_flag=True, help="Print every switch's routing table.")
@click.option("--force", is_flag=True,
              help="Show an image that parses but does not validate (registers that do not "
                   "decode are reported).")
@json_option
def inspect_command(path: Path, steps: bool, routes: bool, force: bool, as_json: bool) -> None:
    """Show an image: its header, and a table per switch and endpoint."""
    from rich.table import Table

    from innet.gen.image import ImageError, validate

    image, fmt = _read(path, check=not force)
    problem = None
    if force:
        try:
            validate(image)
        except ImageError as error:
            problem = str(error)
    try:
        summary = _summary(image, path, fmt)
    except ValueError as error:  # parameters no register map has: nothing to show
        fail(f"{path}: {error}")
    switches, endpoints = [], []
    for t in range(image.target_count):
        try:
            if t < image.nodes:
                colls, table = _switch_rows(image, t)
                switches.append({"node": t, "collectives": colls, "routes": table})
            else:
                endpoints.append(_endpoint_data(image, t))
        except ValueError as error:
            entry = {"node": image.node(t), "error": str(error)}
            (switches if t < image.nodes else endpoints).append(entry)
    if as_json:
        print_json({**summary, "valid": problem is None, "error": problem,
                    "switches": switches, "endpoints": endpoints})
        if problem:
            raise SystemExit(FAILED)
        return
    out = console()
    if not out.is_terminal:
        out.width = 200  # tables at their natural width when piped
    p = image.params
    topo = summary["topology"]
    from innet.gen.topology import title

    described = title(topo["kind"], topo["params"])
    out.print(f"{path}: innet configuration image, format {summary['version']} ({fmt}), "
              f"CRC {summary['crc32']}", soft_wrap=True)
    rows = [("network", (f"{described}: {image.nodes} nodes, "
                        f"{topo['links']} links, fingerprint {image.fingerprint[:16]}")),
            ("targets", (f"{image.target_count}: switches 0..{image.nodes - 1}, endpoints "
                        f"{image.nodes}..{image.target_count - 1} (target N + node)")),
            ("parameters", (f"radix {p.radix}, collective-id slots {p.collective_ids}, routing "
                           f"depth {p.routing_depth}, step depth {p.step_depth}, vector "
                           f"depth {p.vector_depth}, node-id width {p.node_id_width}")),
            ("maps", (f"switch {summary['switch_map_digest'][:16]}, endpoint "
                     f"{summary['endpoint_map_digest'][:16]}")),
            ("writes", f"{image.write_count:,}")]
    if image.failed_links or image.failed_switches:
        links = ", ".join(f"{u}-{v}" for u, v in image.failed_links) or "none"
        dead = ", ".join(map(str, image.failed_switches)) or "none"
        rows.append(("failures", f"links {links}; switches {dead}"))
    if problem:
        rows.append(("INVALID", problem))
    for name, value in rows:
        out.print(f"  {name:<10}  {value}", soft_wrap=True)

    def show(value: Any) -> str:
        if value is None:
            return "-"
        return _ports(["local" if v == "local" else v for v in value]).replace("'", "") \
            if isinstance(value, list) else str(value)

    table = Table(title="switches", title_justify="left", show_edge=False, pad_edge=False)
    for column in ("switch", "routes", "id", "op", "dtype", "req_in", "req_out", "resp_in",
                   "resp_out"):
        table.add_column(column, justify="right" if column in ("switch", "id") else "left")
    for s in switches:
        if "error" in s:
            table.add_row(str(s["node"]), f"[red]{s['error']}[/red]", *[""] * 7)
            continue
        lead = [str(s["node"]), f"{len(s['routes'])}/{image.nodes}"]
        if not s["collectives"]:
            table.add_row(*lead, "-", *[""] * 6)
        for i, c in enumerate(s["collectives"]):
            table.add_row(*(lead if i == 0 else ["", ""]), str(c["collective_id"]), c["op"],
                          c["dtype"], _list(c["req_in"]), "root" if c["root"] else
                          show(c["req_out"]), show(c["resp_in"]), _list(c["resp_out"]))
    out.print()
    out.print(table)
    if routes:
        out.print()
        for s in switches:
            if "routes" in s:
                text = " ".join(f"{d}:{port}" for d, port in s["routes"].items())
                out.print(f"  switch {s['node']} routes  {text or '-'}")
    table = Table(title="endpoints", title_justify="left", show_edge=False, pad_edge=False)
    for column in ("endpoint", "vector", "steps", "op", "dtype"):
        table.add_column(column, justify="right" if column == "endpoint" else "left")
    for e in endpoints:
        if "error" in e:
            table.add_row(str(e["node"]), f"[red]{e['error']}[/red]", "", "", "")
            continue
        vector = f"[{e['vec_base']}, {e['vec_base'] + e['vec_len']})"
        table.add_row(str(e["node"]), vector, str(e["steps"]),
                      e["op"] if e["steps"] else "-", e["dtype"] if e["steps"] else "-")
    out.print()
    out.print(table)
    if steps:
        for e in endpoints:
            if "error" in e or not e["step_table"]:
                continue
            out.print()
            table = Table(title=f"endpoint {e['node']} step table", title_justify="left",
                          show_edge=False, pad_edge=False)
            for column in ("step", "cid", "send to", "send", "recv from", "recv", "then"):
                table.add_column(column, justify="right" if column in ("step", "cid") else
                                 "left")
            for s in e["step_table"]:
                cells = []
                for way in ("send", "recv"):
                    part = s[way]
                    cells += (["-", ""] if part is None else
                              [str(part["peer"]), "[{}, {})".format(*part["elements"])])
                then = "reduce" if s["reduce"] else ("copy" if s["recv"] else "-")
                table.add_row(str(s["step"]), str(s["cid"]), *cells, then)
            out.print(table)
    if problem:
        fail(f"{path}: {problem}", code=FAILED)


def _list(ports: list[int | str]) -> str:
    return "{" + ",".join(str(p) for p in ports) + "}" if ports else "-"


@command.command("validate")
@click.argument("path", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@json_option
def validate_command(path: Path, as_json: bool) -> None:
    """Check an image completely; exit 0 if it is valid, else 1 with the reason."""
    from innet.gen.image import ImageError, decode, detect

    data = path.read_bytes()
    fmt = detect(data)
    try:
        image = decode(data)
    except ImageError as error:
        if as_json:
            print_json({"path": str(path), "format": fmt, "valid": False,
                        "error": str(error)})
            raise SystemExit(FAILED) from None
        fail(f"{path}: {error}", code=FAILED)
    used: set[int] = set()
    for t in image.switches():
        used.update(int(name[5:name.index("]")]) for name, fields in image.values(t).items()
                    if name.startswith("coll[") and name.endswith(".ctrl") and fields["enable"])
    steps = max(image.values(t).get("engine.cfg", {}).get("steps", 0)
                for t in image.endpoints())
    if as_json:
        print_json({**_summary(image, path, fmt), "valid": True, "error": None,
                    "collective_ids_used": sorted(used), "max_steps": steps})
        return
    ids = ", ".join(map(str, sorted(used))) or "none"
    tables = f"step tables of up to {steps} entries" if steps else "no step tables"
    click.echo(f"{path}: valid ({fmt}, format {image.version}): {image.nodes} switches and "
               f"{image.nodes} endpoints, collective ids {ids}, {tables}, CRC "
               f"{image.header.crc32:#010x}")


@command.command("check")
@click.argument("path", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@output_option("Write the channel-dependency graph to this file (GraphML).")
@json_option
def check_command(path: Path, output: Path | None, as_json: bool) -> None:
    """Check an image for deadlock: exit 0 if its channel-dependency graph is acyclic, else 1
    with the cycle (switches, ports and VCs).

    The graph joins every channel (a VC of a link direction) to the channels a flit holding it
    may wait for: along every route of the routing tables (p2p VCs hop-indexed, as many as the
    topology's diameter), and along the request and response trees of every enabled collective
    id (one request VC per id, one response VC shared by all).
    """
    from innet.gen.deadlock import image_collectives, image_graph

    image, fmt = _read(path)
    graph = image_graph(image)
    cycle = graph.cycle()
    if output is not None:
        write_atomic(output, _graphml(graph, cycle))
    ids = sorted(image_collectives(image))
    message = None if cycle is None else f"Deadlock: {graph.describe(cycle)}"
    if as_json:
        print_json({"path": str(path), "format": fmt, "deadlock_free": cycle is None,
                    "error": message, "p2p_vcs": graph.p2p_vcs, "collective_ids_used": ids,
                    "channels": len(graph.channels), "dependencies": len(graph),
                    "cycle": None if cycle is None else [
                        {"node": c.node, "port": c.port, "peer": c.peer, "vc": c.vc,
                         "vc_name": graph.vc_name(c.vc)} for c in cycle]})
        if cycle is not None:
            raise SystemExit(FAILED)
        return
    if cycle is not None:
        fail(f"{path}: {message}", code=FAILED)
    used = ", ".join(map(str, ids)) or "none"
    click.echo(f"{path}: free of deadlock: the channel-dependency graph of the routes "
               f"({graph.p2p_vcs} hop-indexed p2p VCs) and collective ids {used} is acyclic "
               f"({len(graph):,} dependencies among {len(graph.channels):,} channels)")


def _graphml(graph, cycle) -> str:
    """The channel-dependency graph as GraphML: a vertex per channel (``node``, ``port``,
    ``peer``, ``vc``, ``vc_name``, ``on_cycle``), an edge per dependency (``causes``)."""
    import networkx as nx

    on = set(cycle or ())
    out = nx.DiGraph()
    for c in sorted(graph.channels):
        out.add_node(f"{c.node}.{c.port}.{c.vc}", node=c.node, port=c.port, peer=c.peer,
                     vc=c.vc, vc_name=graph.vc_name(c.vc), on_cycle=c in on)
    for (a, b), causes in sorted(graph.edges.items()):
        out.add_edge(f"{a.node}.{a.port}.{a.vc}", f"{b.node}.{b.port}.{b.vc}",
                     causes=" ".join(sorted(causes)))
    return "\n".join(nx.generate_graphml(out)) + "\n"
