"""``innet sim``: cycle-accurate simulations of a whole network.

    innet sim allreduce polarfly --q 3 --elements 1K --op add --dtype fp32 \\
        --algo innet|swing-l|swing-b|recdoub|recdoub-l|recdoub-b|ring|all [--background 0.5] \\
        [--pattern uniform|permutation] [--load backdoor|lanes|bus] [--check-load] \\
        [--threads N] [--waves] [--json] [-o result.json]
    innet sim allreduce piuma --nodes 2 --sockets 2 --cores 4 [--clock-mhz 200] ...

Builds the network's Verilog (one switch and one endpoint per node), its configuration image,
runs every chosen algorithm in one Verilator simulation (:func:`innet.sim.network.simulate`)
and reports, per algorithm, whether every result was bit-exact, the latency in cycles, the
throughput and the cost model's prediction. The image and the input vectors load by the
simulation's backdoor by default; ``--load bus`` loads them through the network's
configuration bus as a host would, every word of the image read back (``--check-load``
reads back every word of a backdoor load).

A PIUMA multi-level network (:func:`innet.gen.topology.piuma`) is simulated with its link
latencies as pipeline stages on its links: each level's latency in cycles of ``--clock-mhz``,
rounded up (:func:`innet.gen.topology.piuma.link_cycles`; at the default 200 MHz Table 1's
5, 25 and 50 ns take 1, 5 and 10 cycles). Its in-network result then reaches every endpoint in
the cycle :func:`innet.sim.golden.idle_latency` predicts with those per-link latencies.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from innet.sim.cli._common import (
    FAILED,
    console,
    fail,
    json_option,
    output_option,
    print_json,
    progress,
    wide,
    write_atomic,
)
from innet.sim.cli._options import (
    dtype_option,
    given,
    op_option,
    topology_from_args,
    topology_options,
)
from innet.sim.cli._parse import SIZE_GRAMMAR, Finite, Size
from innet.sim.network import ALGO_NAMES, ALGOS, LOADS, MAX_ELEMENTS, MAX_SEED

__all__ = ["command"]

#: Where --waves records, in the working directory.
_WAVES_DIR = "innet-sim-waves"

#: Every algorithm ``--algo`` names: ``all`` runs :data:`innet.sim.network.ALGOS`.
_CHOICES = (*ALGO_NAMES, "all")


@click.group("sim")
def command() -> None:
    """Cycle-accurate simulations of a whole network (Verilator)."""


@command.command("allreduce")
@topology_options
@click.option("--elements", type=Size(low=1, high=MAX_ELEMENTS), default=1024,
              show_default=True,
              help=f"Vector length per node ({SIZE_GRAMMAR}).")
@op_option
@dtype_option
@click.option("--algo", type=click.Choice(_CHOICES), default="all", show_default=True,
              help=f"The algorithm: recdoub is recdoub-b, the bandwidth-optimal recursive "
                   f"doubling; all runs {', '.join(ALGOS)}.")
@click.option("--background", type=Finite(min=0, max=1), default=0.0, show_default=True,
              help="Background p2p load per node.")
@click.option("--pattern", type=click.Choice(["uniform", "permutation"]), default="uniform",
              show_default=True, help="Background traffic pattern.")
@click.option("--backpressure", type=Finite(min=0, max=1, max_open=True), default=0.25,
              show_default=True,
              help="Probability a local-link credit is held back in a cycle (in steps of "
                   "1/256, at most 255/256).")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=0, show_default=True,
              help="Seed of the vectors, the backpressure and the background traffic.")
@click.option("--load", "load", type=click.Choice(list(LOADS)), default="backdoor",
              show_default=True,
              help="How the image and the vectors load: the simulation's backdoor, its "
                   "parallel load port, or the network's configuration bus (as a host would).")
@click.option("--check-load", is_flag=True,
              help="Read every word a backdoor load wrote back and compare it (the load port "
                   "and the bus read the image back always).")
@click.option("--threads", type=int, default=1, show_default=True,
              help="Threads of the Verilator model (a build of its own); they pay on networks "
                   "of tens of switches, with a core free for each.")
@click.option("--waves", is_flag=True,
              help=f"Record a VCD of every node's internals in ./{_WAVES_DIR}/ (also with "
                   "WAVES=1): a flat build of its own, minutes for a large network.")
@click.option("--clock-mhz", type=Finite(), default=200.0, show_default=True,
              help="PIUMA: the clock that turns link latencies into pipeline stages.")
@json_option
@output_option("Write the --json summary to this file.")
def allreduce(kind: str, elements: int, op: str, dtype: str, algo: str,
              background: float, pattern: str, backpressure: float, seed: int, load: str,
              check_load: bool, threads: int, waves: bool, clock_mhz: float, as_json: bool,
              output: Path | None, **options: Any) -> None:
    """Allreduce on the simulated network of KIND (polarfly, hyperx, torus, piuma)."""
    from innet.sim.network import Scenario, simulate
    from innet.sim.runner import waves_requested

    waves = waves_requested(waves or None)
    cores = os.cpu_count() or 1
    if not 1 <= threads <= cores:
        raise ValueError(f"--threads must be from 1 to {cores} (this machine's cores), not "
                         f"{threads}")
    link_stages: dict | int = 0
    if kind != "piuma" and given("clock_mhz"):
        raise ValueError(f"--clock-mhz applies to piuma, not {kind}")
    if given("pattern") and not background:
        raise ValueError("--pattern shapes the background traffic: give --background above 0")
    topo = topology_from_args(kind, options)
    name = topo.title
    if kind == "piuma":
        from innet.gen.topology.piuma import link_cycles
        from innet.hw.network import MAX_LINK_STAGES

        if not clock_mhz > 0:
            raise ValueError(f"--clock-mhz must be above 0, not {clock_mhz:g}")
        link_stages = link_cycles(topo, 1000.0 / clock_mhz)
        longest = max(link_stages.values(), default=0)
        if longest > MAX_LINK_STAGES:
            raise ValueError(f"--clock-mhz {clock_mhz:g} makes the longest link {longest:,} "
                             f"cycles; at most {MAX_LINK_STAGES:,} are simulated")
    if waves and Path(_WAVES_DIR).exists() and not Path(_WAVES_DIR).is_dir():
        raise ValueError(f"--waves records into ./{_WAVES_DIR}/, and {_WAVES_DIR} is a file: "
                         f"move it away")
    algos = list(ALGOS) if algo == "all" else [algo]
    runs = [Scenario(a, elements, op=op, dtype=dtype, background=background, pattern=pattern,
                     name=a) for a in algos]
    with progress() as bar:
        task = bar.add_task(f"simulating {name}", total=len(runs))
        outcomes = simulate(topo, runs, seed=seed, waves=waves, backpressure=backpressure,
                            workdir=_WAVES_DIR if waves else None,
                            link_stages=link_stages, load=load, check_load=check_load,
                            threads=threads,
                            progress=lambda done, _total: bar.update(task, completed=done))
    summary = {"topology": name, "nodes": topo.nodes, "elements": elements, "op": op,
               "dtype": dtype, "background": background, "pattern": pattern,
               "link_stages": _stage_counts(link_stages), "load": load, "threads": threads,
               "seed": seed, "backpressure": backpressure,
               "algorithms": {o.scenario.algo: o.to_dict() for o in outcomes}}
    if output is not None:
        write_atomic(output, json.dumps(summary, indent=2, sort_keys=True) + "\n")
    if as_json:
        print_json(summary)
    else:
        out = wide(console())
        load = f"{background:g} ({pattern})" if background else "0"
        out.print(f"{name}: {topo.nodes} nodes, {elements} x {dtype} {op}, background {load}")
        if link_stages:
            counts = _stage_counts(link_stages)
            out.print("link stages: " + ", ".join(f"{n} link{'s' * (n != 1)} x {k}"
                                                  for k, n in sorted(counts.items())))
        out.print(f"{'algorithm':<10} {'correct':>7} {'cycles':>8} {'elem/cycle':>10} "
                  f"{'predicted':>9} {'p2p sent/recv':>14}")
        for o in outcomes:
            pred = f"{o.predicted_cycles:.0f}" if o.predicted_cycles is not None else "-"
            out.print(f"{o.scenario.algo:<10} {str(o.correct).lower():>7} "
                      f"{o.latency_cycles:>8} {o.throughput_elems_per_cycle:>10.3f} "
                      f"{pred:>9} {f'{o.p2p_sent}/{o.p2p_received}':>14}")
        for o in outcomes:
            if o.arrivals is not None:
                exact = sum(o.arrivals[u] == o.predicted_arrivals[u] for u in o.arrivals)
                out.print(f"{o.scenario.algo}: first result on time at {exact} of "
                          f"{len(o.arrivals)} endpoints (last {max(o.arrivals.values())}, "
                          f"model {max(o.predicted_arrivals.values())} cycles after the first "
                          f"request)")
    if not all(o.correct for o in outcomes):
        bad = next(o for o in outcomes if not o.correct)
        fail(f"{bad.scenario.algo}: {bad.detail}", code=FAILED)


def _stage_counts(link_stages: dict | int) -> dict[int, int]:
    """How many links have each number of pipeline stages (``{}`` for a uniform count)."""
    if not isinstance(link_stages, dict):
        return {}
    counts: dict[int, int] = {}
    for stages in link_stages.values():
        counts[stages] = counts.get(stages, 0) + 1
    return dict(sorted(counts.items()))

