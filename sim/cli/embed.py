"""``innet embed``: PIUMA in-network collective embeddings on PolarFly, HyperX, torus and PIUMA.

``innet embed polarfly --q 7 [--participants 0,3,5] [--root auto|N] [--collective-id K]
[--op add --dtype int32] [--collective-kind allreduce] [--fail-links u-v,...]
[--fail-switches a,b] [--trees T] [--json] [-o DIR]`` (and ``hyperx --shape 4x4``,
``torus --shape 4x4 [--mesh]``, ``piuma --nodes 2x2 [--sockets 16 --cores 8 ...]``: PIUMA's
multi-level network, whose links cost their level's latency, ``L_C``/``L_S``/``L_P`` ns at
``--clock-mhz``, default 1 GHz).

``--json`` prints ``root``, ``depth``, ``collective_id``, ``switches`` (a list of
``{"node", "req_in", "req_out", "resp_in", "resp_out"}`` in the topology's port numbering, the
local port spelt ``"local"``), ``links_used`` (request-direction links
``[child, child_port, parent, parent_port]``) and ``predicted_latency_cycles`` (``T(m)`` of
the cost model for ``--elements m``), plus ``kind``, ``op``, ``dtype``, ``participants``,
``predicted`` (alpha, beta), ``topology`` (the fingerprint) and ``network`` (kind, params,
nodes, links, radix). With ``--trees T > 1`` it prints ``trees`` (one
such object per tree), ``link_load`` (``[node, port, fraction of the vector]`` per directed
channel), ``max_link_load``, ``predicted_gain`` and the striped ``predicted`` /
``predicted_latency_cycles``.

``--compare [--sizes 1,64,1K | 1..1M]`` prices the in-network allreduce against every
host-style algorithm (Swing, recursive doubling, ring, bucket) on the same network with the same
cost model (:mod:`innet.gen.compare`, cycles and elements) and prints which wins at which size;
with ``--json`` the summary gets a ``compare`` member (:meth:`Comparison.to_dict`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from innet.gen.cost import CostModel
from innet.sim.cli._common import (
    count,
    json_option,
    output_option,
    print_json,
    writable_path,
    write_atomic_all,
)
from innet.sim.cli._options import (
    decorate,
    dtype_option,
    given,
    op_option,
    topology_from_args,
    topology_options,
)
from innet.sim.cli._parse import (
    SIZE_GRAMMAR,
    Size,
    Sizes,
    format_count,
    node_id,
    parse_links,
    parse_node_ids,
)

__all__ = ["command"]

_DEFAULT = CostModel()


def _root(text: str, nodes: int) -> int | str:
    if text == "auto":
        return text
    if text.isdigit() and text.isascii():
        return node_id(text, "--root", nodes)
    raise ValueError(f"--root must be auto or a node id, not {text!r:.60}")


def _options(func):
    return decorate(func, [
        click.option("--participants", default=None, metavar="LIST",
                     help="Participating nodes, e.g. 0,3,5 or 0-15 [default: all]."),
        click.option("--root", default="auto", show_default=True, metavar="auto|N",
                     help="Root switch; auto = minimum-eccentricity participant."),
        click.option("--collective-kind", type=click.Choice(["allreduce", "reduce",
                                                             "broadcast", "barrier"]),
                     default="allreduce", show_default=True, help="The collective."),
        click.option("--collective-id", type=int, default=0, show_default=True,
                     help="Collective id (first one with --trees)."),
        op_option,
        dtype_option,
        click.option("--fail-links", default=None, metavar="u-v,...",
                     help="Failed links to embed around."),
        click.option("--fail-switches", default=None, metavar="LIST",
                     help="Failed switches to embed around."),
        click.option("--trees", type=int, default=1, show_default=True,
                     help="Stripe the vector over this many trees (different roots and ids)."),
        click.option("--elements", type=Size(), default=1, show_default=True,
                     help=f"Vector length for the predicted latency ({SIZE_GRAMMAR})."),
        click.option("--compare", is_flag=True,
                     help="Predict which allreduce wins at which size: in-network against "
                          "Swing, recursive doubling, ring and bucket on this network."),
        click.option("--sizes", type=Sizes(), default=None,
                     help=f"Vector sizes in elements for --compare, e.g. 1,64,1K or 1..1M "
                          f"(x4 steps; {SIZE_GRAMMAR}) [default: 1..1M]."),
        click.option("--link-latency", type=click.FloatRange(min=0),
                     default=_DEFAULT.link_latency, show_default=True,
                     help="Cost model: cycles a link adds per hop."),
        click.option("--switch-latency", type=click.FloatRange(min=0),
                     default=_DEFAULT.switch_latency, show_default=True,
                     help="Cost model: cycles to cross a switch."),
        click.option("--local-latency", type=click.FloatRange(min=0),
                     default=_DEFAULT.local_latency, show_default=True,
                     help="Cost model: cycles between endpoint and switch, each way."),
        click.option("--front-latency", type=click.FloatRange(min=0),
                     default=_DEFAULT.front_latency, show_default=True,
                     help="Cost model: cycles a switch's collective engine adds to a request "
                          "before its reduction."),
        click.option("--reduce-latency", type=click.FloatRange(min=0),
                     default=_DEFAULT.reduce_latency,
                     help="Cost model: cycles a switch's collective engine takes to reduce two "
                          "or more ports [default: its reduction unit's at the topology's "
                          "radix; for mul its multipliers' 9 cycles per level of "
                          "ceil(log2 k) for k ports]."),
        click.option("--step-overhead", type=click.FloatRange(min=0),
                     default=_DEFAULT.step_overhead, show_default=True,
                     help="Cost model: cycles a host-style step-table entry takes after its "
                          "last element."),
        click.option("--link-bandwidth", type=click.FloatRange(min=0, min_open=True),
                     default=_DEFAULT.link_bandwidth, show_default=True,
                     help="Cost model: elements per cycle per link direction."),
        click.option("--local-bandwidth", type=click.FloatRange(min=0, min_open=True),
                     default=_DEFAULT.local_bandwidth, show_default=True,
                     help="Cost model: elements per cycle between endpoint and switch, each "
                          "way (inf: never the bottleneck)."),
        click.option("--element-bytes", type=click.IntRange(min=1),
                     default=_DEFAULT.element_bytes, show_default=True,
                     help="Cost model: bytes per element."),
        click.option("--clock-mhz", type=click.FloatRange(min=0, min_open=True), default=None,
                     help="Clock frequency in MHz: --compare --json adds seconds; on piuma, "
                          "the clock at which link latencies become cycles [default: 1000]."),
        click.option("--booksim-routing", type=click.Path(path_type=Path), default=None,
                     callback=writable_path(),
                     help="Also write the p2p routing table as a BookSim2 routing file."),
        json_option,
        output_option("Write embedding.json (the --json summary) into this directory.",
                      directory=True),
    ])


def _summary(embedding, topo, model, elements: int) -> dict[str, Any]:
    from innet.gen.embed import embedding_cost

    cost = embedding_cost(embedding, topo, model)
    data = embedding.to_dict()
    data["predicted"] = {"alpha_cycles": cost.alpha, "beta_cycles_per_element": cost.beta,
                         "elements": elements}
    data["predicted_latency_cycles"] = cost.time(elements)
    return data


def _run(topo, description: str, opts: dict[str, Any],
         link_latencies: dict[tuple[int, int], float] | None = None) -> None:
    from innet.gen.embed import embed, stripe
    from innet.gen.routing import iter_booksim_routing, routing

    if opts["trees"] < 1:
        raise ValueError(f"--trees must be at least 1, not {opts['trees']}")
    if opts["booksim_routing"] is not None:
        from innet.gen.routing.core import check_table_size

        check_table_size(topo.nodes)
    model = CostModel(link_latency=opts["link_latency"], switch_latency=opts["switch_latency"],
                      local_latency=opts["local_latency"],
                      front_latency=opts["front_latency"],
                      reduce_latency=opts["reduce_latency"],
                      step_overhead=opts["step_overhead"],
                      link_bandwidth=opts["link_bandwidth"],
                      local_bandwidth=opts["local_bandwidth"],
                      element_bytes=opts["element_bytes"],
                      link_latencies=link_latencies or {},
                      clock_hz=None if opts["clock_mhz"] is None else opts["clock_mhz"] * 1e6)
    sizes = None
    if opts["compare"]:
        from innet.gen.compare import DEFAULT_SIZES

        sizes = opts["sizes"] if opts["sizes"] is not None else DEFAULT_SIZES
        _check_compare(opts)
    elif opts["sizes"] is not None:
        raise ValueError("--sizes applies to --compare; add --compare")
    elif opts["clock_mhz"] is not None and topo.kind != "piuma":
        raise ValueError(f"--clock-mhz applies to --compare and to piuma, not to {topo.kind} "
                         f"without --compare; add --compare")
    participants = (parse_node_ids(opts["participants"], "--participants", nodes=topo.nodes)
                    if opts["participants"] is not None else None)
    links = parse_links(opts["fail_links"], nodes=topo.nodes) if opts["fail_links"] else None
    dead = (parse_node_ids(opts["fail_switches"], "--fail-switches", nodes=topo.nodes)
            if opts["fail_switches"] else None)
    root = _root(opts["root"], topo.nodes)
    common = {"kind": opts["collective_kind"], "op": opts["op"], "dtype": opts["dtype"],
              "failed_links": links, "failed_switches": dead}
    head = {"kind": topo.kind, "params": {k: (list(v) if isinstance(v, tuple) else v)
                                          for k, v in topo.params.items()},
            "nodes": topo.nodes, "links": topo.num_links, "radix": topo.radix}
    if opts["trees"] == 1:
        embedding = embed(topo, participants, root=root, collective_id=opts["collective_id"],
                          **common)
        data = _summary(embedding, topo, model, opts["elements"])
        data["network"] = head
        trees = [embedding]
        striping = None
    else:
        if root != "auto":
            raise ValueError("--root and --trees > 1 cannot be combined: each tree has its own "
                             "root")
        from innet.gen.embed.dynamic import check_participants
        from innet.gen.routing import parse_failures

        taking = len(check_participants(topo, participants,
                                        parse_failures(topo, links, dead)[1]))
        if opts["trees"] > taking:
            raise ValueError(f"--trees must be at most the number of participants ({taking}), "
                             f"not {opts['trees']}")
        striping = stripe(topo, opts["trees"], participants, first_id=opts["collective_id"],
                          model=model, **common)
        trees = list(striping.embeddings)
        data = {"network": head, "topology": topo.fingerprint,
                "trees": [_summary(e, topo, model, opts["elements"]) for e in trees],
                "link_load": [list(item) for item in striping.loads],
                "max_link_load": striping.max_link_load,
                "predicted_gain": striping.predicted_gain,
                "predicted": {"alpha_cycles": striping.cost.alpha,
                              "beta_cycles_per_element": striping.cost.beta,
                              "elements": opts["elements"]},
                "predicted_latency_cycles": striping.cost.time(opts["elements"])}
    comparison = None
    if sizes is not None:
        from innet.gen.compare import compare

        comparison = compare(topo, sizes, model, innet=striping or trees[0],
                             failed_links=links)
        data["compare"] = comparison.to_dict()
    p2p = None
    if opts["booksim_routing"] is not None:  # check before anything is written
        p2p = routing(topo, failed_links=links, failed_switches=dead)
        p2p.hardware_table()  # raises if a failure leaves some destination unreachable
    files = []
    if opts["output"] is not None:
        import json

        files.append((Path(opts["output"]) / "embedding.json",
                      json.dumps(data, indent=2, sort_keys=True) + "\n"))
    if p2p is not None:
        files.append((opts["booksim_routing"], iter_booksim_routing(p2p)))
    write_atomic_all(files)
    if opts["as_json"]:
        print_json(data)
        return
    _print(description, topo, trees, data, striping, opts)
    if comparison is not None:
        _print_compare(comparison, topo.radix, opts["op"])


def _check_compare(opts: dict[str, Any]) -> None:
    """--compare prices full-system allreduces: host-style schedules run on every node."""
    if opts["collective_kind"] != "allreduce":
        raise ValueError(f"--compare prices allreduces, not --collective-kind "
                         f"{opts['collective_kind']}")
    if opts["participants"] is not None:
        raise ValueError("--compare cannot be combined with --participants: host-style "
                         "schedules run on every node")
    if opts["fail_switches"] is not None:
        raise ValueError("--compare cannot be combined with --fail-switches: host-style "
                         "schedules run on every node")


def _cycles(value: float) -> str:
    """Cycles in at most 6 characters: 1234, 12345, 1.23M, 123k."""
    if value < 1e5:
        return f"{value:.0f}"
    if value < 1e6:
        return f"{value / 1e3:.0f}k"
    return f"{value / 1e6:.3g}M"


def _print_compare(comparison, radix: int, op: str) -> None:
    from innet.gen.ops import Op

    echo = click.echo
    model = comparison.model
    if model.reduce_latency is None and Op.parse(op) == Op.MUL:
        reduction = "reduction 9 cycles per level of ceil(log2 k) for k ports (mul)"
    else:
        reduction = f"reduction {model.reduction(radix):g} cycles"
    local = "unlimited" if model.local_bandwidth is None else f"{model.local_bandwidth:g}"
    echo("")
    echo(f"which allreduce wins at which size (predicted cycles, 1 element = "
         f"{model.element_bytes} bytes)")
    links = f"link {model.link_latency:g}"
    if model.link_latencies:
        low, high = min(model.link_latencies.values()), max(model.link_latencies.values())
        links = f"link {low:g}-{high:g} (per link)"
    echo(f"  model: {links}, switch {model.switch_latency:g}, endpoint "
         f"port {model.local_latency:g} cycles; engine front end {model.front_latency:g}, "
         f"{reduction};")
    echo(f"         host step overhead {model.step_overhead:g} cycles; {model.link_bandwidth:g}"
         f" element/cycle per link, {local} per endpoint port")
    names = list(comparison.predictions)
    rows = [["", *names, ""],
            ["alpha", *(f"{comparison.predictions[n].cost.alpha:g}" for n in names), ""],
            ["beta", *(f"{comparison.predictions[n].cost.beta:.3g}" for n in names), ""],
            ["elements", *(["cycles"] + [""] * (len(names) - 1)), "fastest"]]
    for row in comparison.rows():
        rows.append([format_count(row["elements"]),
                     *(_cycles(row["cycles"][n]) for n in names), row["winner"]])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        cells = [text.rjust(w) for text, w in zip(r[:-1], widths, strict=False)]
        echo(("  " + "  ".join([*cells, r[-1]])).rstrip())
    intervals = comparison.intervals()
    if len(intervals) == 1:
        echo(f"  fastest: {intervals[0][2]} at every size")
    else:
        parts = []
        for start, stop, name in intervals:
            if stop is None:
                parts.append(f"{name} from {format_count(start)} on")
            elif start == stop - 1:
                parts.append(f"{name} at {format_count(start)}")
            elif start == 1:
                parts.append(f"{name} up to {format_count(stop - 1)}")
            else:
                parts.append(f"{name} from {format_count(start)} to {format_count(stop - 1)}")
        echo("  fastest: " + ", ".join(parts) + " elements")
    if model.clock_hz is not None:
        echo(f"  at {model.clock_hz / 1e6:g} MHz one cycle is {1e9 / model.clock_hz:.4g} ns")
    for name, reason in comparison.skipped.items():
        echo(f"  {name} left out: {reason}")


def _print(description, topo, trees, data, striping, opts) -> None:
    from innet.gen.embed.types import ports_json

    echo = click.echo
    echo(f"{description}: {topo.nodes} switches, {topo.num_links} links, radix {topo.radix}")
    summaries = data["trees"] if striping is not None else [data]
    for e, summary in zip(trees, summaries, strict=True):
        pred = summary["predicted"]
        echo(f"{e.kind} {e.op.name.lower()} {e.dtype.name.lower()} on collective id "
             f"{e.collective_id}: {count(len(e.participants), 'participant')}, root {e.root}, "
             f"depth {e.depth}, {count(len(e.switches), 'switch')}, "
             f"{count(len(e.links), 'link')}")
        echo(f"  predicted: alpha {pred['alpha_cycles']:g} cycles, beta "
             f"{pred['beta_cycles_per_element']:g} cycles/element, T({opts['elements']}) = "
             f"{summary['predicted_latency_cycles']:g} cycles")
    if striping is not None:
        cost = striping.cost
        echo(f"striped over {len(trees)} trees: max link load {striping.max_link_load:.3g} of "
             f"the vector, predicted bandwidth gain {striping.predicted_gain:.3g}x")
        echo(f"  predicted: alpha {cost.alpha:g} cycles, beta {cost.beta:g} cycles/element, "
             f"T({opts['elements']}) = {cost.time(opts['elements']):g} cycles")
    if (e := trees[0]).failed_links or e.failed_switches:
        echo(f"avoiding {count(len(e.failed_links), 'failed link')} and "
             f"{count(len(e.failed_switches), 'failed switch')}")
    if striping is None and len(e.switches) <= 32:
        def many(ports) -> str:
            return ",".join(map(str, ports_json(ports))) or "-"

        def one(node: int, port: int | None) -> str:
            return str(port) if port is not None else "root" if node == e.root else "-"

        rows = [("node", "req_in", "req_out", "resp_in", "resp_out")]
        rows += [(str(s.node), many(s.req_in), one(s.node, s.req_out), one(s.node, s.resp_in),
                  many(s.resp_out)) for s in e.switches]
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        for row in rows:
            echo("  " + "  ".join(text.ljust(w) for text, w in zip(row, widths, strict=True))
                 .rstrip())
    if opts["output"] is not None:
        echo(f"wrote {Path(opts['output']) / 'embedding.json'}")
    if opts["booksim_routing"] is not None:
        echo(f"wrote {opts['booksim_routing']} (BookSim2 routing table)")


@click.command("embed")
@topology_options
@_options
def command(kind: str, **opts: Any) -> None:
    """Embed an in-network collective (PIUMA's dynamic embedding) on the network of KIND
    (polarfly, hyperx, torus, piuma) and predict its latency.

    The root is the minimum-eccentricity participant unless --root names one; every
    participant's input takes its minimal path to the root, reductions happen where paths
    meet, and the result returns on the inverse tree.

    On piuma, routing and trees are PIUMA's (dimension order between nodes, latency-shortest
    inside them; PIUMA "Allreduce Embedding"); every link costs its level's latency in cycles
    at --clock-mhz (default 1000: one cycle per ns) instead of --link-latency.

    --compare prices the in-network allreduce against the host-style algorithms (swing-l,
    swing-b, recdoub-l, recdoub-b, ring, bucket) on the same network and routing, with one
    cost model in cycles and elements (--link-latency ... --step-overhead), and prints which
    wins at which size (--sizes, in elements); --json adds a "compare" member.

    \b
    innet embed polarfly --q 3 --compare
    innet embed torus --shape 4x4 --compare --sizes 1,64,1K --json
    """
    if kind == "piuma" and given("link_latency"):
        raise ValueError("--link-latency does not apply to piuma: every link costs its level's "
                         "latency at --clock-mhz")
    topo = topology_from_args(kind, opts)
    if kind != "piuma":
        _run(topo, topo.title, opts)
        return
    from innet.gen.topology import link_latencies

    if opts["clock_mhz"] is None:
        opts["clock_mhz"] = 1000.0
    per_ns = opts["clock_mhz"] / 1000.0
    _run(topo, topo.title, opts,
         link_latencies={key: ns * per_ns for key, ns in link_latencies(topo).items()})


