"""``innet swing``: host-style allreduce schedules (Swing and the baselines) on a network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from innet.sim.cli._common import (
    FAILED,
    console,
    fail,
    json_option,
    output_option,
    write_atomic_all,
)
from innet.sim.cli._options import given, topology_from_args, topology_options
from innet.sim.cli._parse import (
    SIZE_GRAMMAR,
    Sizes,
    format_bytes,
    parse_bandwidth,
    parse_time,
)

__all__ = ["command"]

_ALGORITHMS = ("swing-b", "swing-l", "recdoub-b", "recdoub-l", "ring", "bucket")
_NAMES = {"swing-b": "Swing, bandwidth-optimal", "swing-l": "Swing, latency-optimal",
          "recdoub-b": "recursive doubling, bandwidth-optimal (Rabenseifner)",
          "recdoub-l": "recursive doubling, latency-optimal", "ring": "ring",
          "bucket": "bucket"}


def _model(schedule, topo):
    from innet.gen.routing import routing
    from innet.gen.swing.cost import congestion

    return congestion(schedule, topo.ports.peer, routing(topo).next_port)


def _compact(value: Any, indent: int = 0) -> str:
    """JSON with dictionaries indented and lists of numbers on one line (big tables stay
    readable and fast to print)."""
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{json.dumps(str(k))}: {_compact(value[k], indent + 2)}"
                 for k in sorted(value)]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list) and value and isinstance(value[0], list | dict):
        items = [pad + _compact(v, indent + 2) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    return json.dumps(value, separators=(", ", ": "))


def _summary(schedule, model, network: str, peers: bool) -> dict:
    sent = schedule.blocks_sent()
    fraction = schedule.fraction_sent()
    return {
        "algorithm": schedule.algorithm,
        "network": network,
        "shape": list(schedule.shape),
        "ranks": schedule.ranks,
        "collectives": schedule.collectives,
        "steps": schedule.steps,
        "blocks": list(schedule.blocks),
        "blocks_sent_per_rank": [sum(col) for col in zip(*sent, strict=True)],
        "vector_sent_per_rank_max": max(fraction),
        "max_hops": model.max_hops,
        "congestion_deficiency": model.congestion_deficiency,
        "bandwidth_deficiency": model.bandwidth_deficiency,
        "latency_deficiency": model.latency_deficiency,
        "steps_with_traffic": model.steps,
    } | ({"peers": [schedule.peers(c) for c in range(schedule.collectives)],
          "recv_peers": [schedule.recv_peers(c) for c in range(schedule.collectives)]}
         if peers else {})


@click.command("swing")
@topology_options
@click.option("--algo", "algorithm", type=click.Choice(_ALGORITHMS), default="swing-b",
              show_default=True, help="The allreduce algorithm.")
@click.option("--multiport/--single-port", default=None,
              help="One collective per port direction [default: multiport for Swing, ring "
                   "and bucket, single-port for recursive doubling, as in the paper].")
@click.option("--nonpow2", type=click.Choice(("auto", "paper", "fold")), default="auto",
              show_default=True, help="Sides that are not powers of two (Swing, rec. doubling).")
@click.option("--verify", is_flag=True,
              help="Run the schedule on random data on every rank; exit 1 unless exact.")
@click.option("--model-sizes", type=Sizes(low=1, unit="B"), default=None,
              help=f"Predict every algorithm's time in µs at these vector sizes in bytes, e.g. "
                   f"32B..128MiB or 1Ki,1Mi ({SIZE_GRAMMAR}); for the RTL network in cycles "
                   f"see innet embed --compare.")
@click.option("--alpha", default="1us", show_default=True, metavar="TIME",
              help="Overhead of every step (message) of a rank, with its unit: 1us, 800ns.")
@click.option("--bandwidth", default="400Gbps", show_default=True, metavar="RATE",
              help="Link bandwidth: 400Gbps, 1.6Tbps (a bare number is in Gbit/s).")
@click.option("--hop-latency", default="400ns", show_default=True, metavar="TIME",
              help="Latency of one hop (link and switch), with its unit: 400ns, 0.1us.")
@json_option
@output_option("Write schedule.json (every entry) and summary.json to this directory.",
               directory=True)
def command(kind: str, algorithm: str, multiport: bool | None, nonpow2: str, verify: bool,
            model_sizes: list[int] | None, alpha: str, bandwidth: str, hop_latency: str,
            as_json: bool, output: Path | None, **options: Any) -> None:
    """Generate a Swing, recursive-doubling, ring or bucket allreduce schedule on the network
    of KIND (polarfly, hyperx, torus, piuma), with its congestion on the network's routing,
    and optionally check it and predict which algorithm wins at which size.

    Rank r runs on node r: ranks are laid out on the torus or HyperX shape, as a ring of all
    nodes on PolarFly and PIUMA.

    \b
    innet swing torus --shape 8x8 --algo swing-b --verify
    innet swing hyperx --shape 16x16 --model-sizes 32B..128MiB
    """
    from innet.gen.compare import host_shape
    from innet.gen.cost import CostModel
    from innet.gen.swing import build_schedule
    from innet.gen.swing import verify as verify_schedule
    from innet.gen.swing.cost import model_table

    named = [f"--{name.replace('_', '-')}" for name in ("alpha", "bandwidth", "hop_latency")
             if given(name)]
    if named and model_sizes is None:
        raise ValueError(f"{', '.join(named)} {'applies' if len(named) == 1 else 'apply'} to "
                         f"--model-sizes; add --model-sizes")
    alpha, hop_latency = _seconds(alpha, "--alpha"), _seconds(hop_latency, "--hop-latency")
    rate = parse_bandwidth(bandwidth, "--bandwidth")
    if not rate > 0:
        raise ValueError(f"--bandwidth must be above 0, not {bandwidth!r}")
    bandwidth = rate
    beta = 8 / (bandwidth * 1e9)
    topo = topology_from_args(kind, options)
    network, shape = topo.title, host_shape(topo)
    schedule = build_schedule(algorithm, shape, multiport=multiport, nonpow2=nonpow2)
    model = _model(schedule, topo)
    summary = _summary(schedule, model, network, peers=as_json or output is not None)

    verdict = None
    if verify:
        verdict = verify_schedule(schedule)
        summary["verify"] = {"exact": verdict.exact, "message": verdict.message,
                             "elements": verdict.elements}
    table = None
    if model_sizes is not None:
        models = {}
        for name in _ALGORITHMS:
            if name == algorithm:
                models[name] = model
                continue
            try:
                other = build_schedule(name, shape, nonpow2=nonpow2)
            except ValueError:  # e.g. a ring too large for a step table: left out
                continue
            models[name] = _model(other, topo)
        table = model_table(models, model_sizes, alpha, beta, hop_latency)
        cost_model = CostModel.from_seconds(alpha, beta, hop_latency)
        for row in table:
            row["cycles"] = {name: time * cost_model.clock_hz
                             for name, time in row["times"].items()}
        summary["model"] = {"alpha": alpha, "beta": beta, "hop_latency": hop_latency,
                            "units": {"size": "bytes", "times": "seconds", "alpha": "seconds",
                                      "beta": "seconds per byte",
                                      "hop_latency": "seconds",
                                      "cycles": "cycles of cost_model.clock_hz"},
                            "cost_model": cost_model.to_dict(), "sizes": table}

    if output is not None:
        write_atomic_all([(output / "schedule.json", schedule.to_json() + "\n"),
                          (output / "summary.json", _compact(summary) + "\n")])

    if as_json:
        click.echo(_compact(summary))
    else:
        _print(summary, network, table, format_bytes, (alpha, bandwidth, hop_latency))
        if output is not None:
            console().print(f"wrote {output / 'schedule.json'} and {output / 'summary.json'}")
    if verdict is not None and not verdict.exact:
        fail(f"verify: {verdict.message}", code=FAILED)


def _print(summary: dict, network: str, table, format_size, params) -> None:
    from rich.table import Table

    out = console()
    ranks = summary["ranks"]
    info = Table(title=f"{_NAMES[summary['algorithm']]} on {network}", show_header=False)
    info.add_row("ranks", str(ranks))
    info.add_row("collectives", str(summary["collectives"]))
    info.add_row("steps", str(summary["steps"]))
    blocks = sorted(set(summary["blocks"]))
    info.add_row("blocks per collective", ", ".join(str(b) for b in blocks))
    info.add_row("vector sent per rank", f"{summary['vector_sent_per_rank_max']:.4f} "
                                         f"(optimum {2 * (ranks - 1) / ranks:.4f})")
    info.add_row("max hops", str(summary["max_hops"]))
    info.add_row("congestion deficiency Ξ", f"{summary['congestion_deficiency']:.4f}")
    info.add_row("bandwidth deficiency Ψ", f"{summary['bandwidth_deficiency']:.4f}")
    info.add_row("latency deficiency Λ", f"{summary['latency_deficiency']:.4f}")
    out.print(info)
    if "verify" in summary:
        v = summary["verify"]
        out.print(f"verify: {v['message']} ({ranks} ranks, {v['elements']} elements)")
    if table:
        names = list(table[0]["times"])
        alpha, bandwidth, hop_latency = params
        grid = Table(title=f"predicted allreduce time in µs ({alpha * 1e6:g} µs/step, "
                           f"{hop_latency * 1e9:g} ns/hop, {bandwidth:g} Gbit/s)", box=None,
                     pad_edge=False,
                     show_edge=False, padding=(0, 1))
        grid.add_column("size", justify="right")
        for name in names:
            grid.add_column(name, justify="right")
        grid.add_column("best")
        for row in table:
            cells = [f"{row['times'][n] * 1e6:.1f}" for n in names]
            grid.add_row(format_size(row["size"]), *cells, row["best"])
        out.print(grid)


def _seconds(text: str, what: str) -> float:
    """A time option's value (``1us``, ``400ns``) in seconds, at most one second. A bare number
    is refused: its unit would be a guess."""
    nanoseconds = parse_time(text, what)
    if not any(c.isalpha() for c in str(text)):
        raise ValueError(f"{what} needs a unit, such as 1us or 400ns, not {text!r}")
    if nanoseconds > 1e9:
        raise ValueError(f"{what} must be at most 1s, not {text!r}")
    return nanoseconds / 1e9
