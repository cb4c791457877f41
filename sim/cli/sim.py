"""``innet sim``: cycle-accurate simulations of a whole network.

    innet sim allreduce polarfly --q 3 --elements 1024 --op add --dtype fp32 \\
        --algo innet|swing-l|swing-b|recdoub|ring|all [--background 0.5] \\
        [--pattern uniform|permutation] [--waves] [--json]

Builds the network's Verilog (one switch and one endpoint per node), its configuration image,
runs every chosen algorithm in one Verilator simulation (:func:`innet.sim.network.simulate`)
and reports, per algorithm, whether every result was bit-exact, the latency in cycles, the
throughput and the cost model's prediction.
"""

from __future__ import annotations

import click

from innet.sim.cli._common import console, fail, json_option, print_json, progress

__all__ = ["command"]

_ALGOS = ("innet", "swing-l", "swing-b", "recdoub", "ring")


@click.group("sim")
def command() -> None:
    """Cycle-accurate simulations of a whole network (Verilator)."""


@command.command("allreduce")
@click.argument("kind", type=click.Choice(["polarfly", "hyperx", "torus"]))
@click.option("--q", type=int, default=None, help="PolarFly: the prime power q.")
@click.option("--shape", default=None, help="HyperX or torus shape, such as 4x4.")
@click.option("--elements", type=int, default=1024, show_default=True,
              help="Vector length per node.")
@click.option("--op", default="add", show_default=True, help="Reduction operation.")
@click.option("--dtype", default="int32", show_default=True, help="int32, uint32 or fp32.")
@click.option("--algo", default="all", show_default=True,
              help=f"One of {', '.join(_ALGOS)} or all.")
@click.option("--background", type=float, default=0.0, show_default=True,
              help="Background p2p load per node (0..1).")
@click.option("--pattern", type=click.Choice(["uniform", "permutation"]), default="uniform",
              show_default=True, help="Background traffic pattern.")
@click.option("--backpressure", type=float, default=0.25, show_default=True,
              help="Probability a local-link credit is held back in a cycle.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--waves", is_flag=True, help="Record a VCD in ./innet-sim-waves/.")
@json_option
def allreduce(kind, q, shape, elements, op, dtype, algo, background, pattern, backpressure,
              seed, waves, as_json) -> None:
    """Allreduce on the simulated network of KIND (polarfly, hyperx, torus)."""
    from innet.sim.cli.image import topology_from_args
    from innet.sim.network import Scenario, simulate

    topo, _dims, name = topology_from_args(kind, q, 0, 0, shape, False)
    algos = list(_ALGOS) if algo == "all" else [algo]
    if algo != "all" and algo not in _ALGOS:
        fail(f"--algo must be one of {', '.join(_ALGOS)} or all, not {algo!r}")
    runs = [Scenario(a, elements, op=op, dtype=dtype, background=background, pattern=pattern,
                     name=a) for a in algos]
    with progress() as bar:
        task = bar.add_task(f"simulating {name}", total=len(runs))
        outcomes = simulate(topo, runs, seed=seed, waves=waves, backpressure=backpressure,
                            workdir="innet-sim-waves" if waves else None,
                            progress=lambda done, _total: bar.update(task, completed=done))
    if as_json:
        print_json({"topology": name, "nodes": topo.nodes, "elements": elements, "op": op,
                    "dtype": dtype, "background": background, "pattern": pattern,
                    "algorithms": {o.scenario.algo: o.to_dict() for o in outcomes}})
    else:
        out = console()
        out.print(f"{name}: {topo.nodes} nodes, {elements} x {dtype} {op}, background "
                  f"{background:g} ({pattern})")
        out.print(f"{'algorithm':<10} {'correct':>7} {'cycles':>8} {'elem/cycle':>10} "
                  f"{'predicted':>9} {'p2p sent/recv':>14}")
        for o in outcomes:
            pred = f"{o.predicted_cycles:.0f}" if o.predicted_cycles is not None else "-"
            out.print(f"{o.scenario.algo:<10} {str(o.correct).lower():>7} "
                      f"{o.latency_cycles:>8} {o.throughput_elems_per_cycle:>10.3f} "
                      f"{pred:>9} {f'{o.p2p_sent}/{o.p2p_received}':>14}")
    if not all(o.correct for o in outcomes):
        bad = next(o for o in outcomes if not o.correct)
        fail(f"{bad.scenario.algo}: {bad.detail}")
