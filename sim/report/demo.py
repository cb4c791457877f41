"""``innet demo``: the whole flow on the default network, from topology to measured report.

On PolarFly ER_3 (13 switches of radix 4; PolarFly, SC'22, Section IV) :func:`run_demo`

1. builds the topology, the p2p routing (PolarFly, Section IV-D) and the in-network allreduce
   embedding (PIUMA, "Allreduce Embedding": minimum-eccentricity root, minimal paths);
2. builds the configuration image of that network (:mod:`innet.gen.image`: binary,
   ``$readmemh`` hex, JSON) and the Verilog of the whole network with its port metadata
   (:func:`innet.hw.network.emit_network`: the product network, without the simulation's
   test ports);
3. simulates, in one Verilator run, the allreduce of every vector size with every algorithm:
   in-network, Swing-L, Swing-B, recursive doubling and ring (:func:`innet.sim.network.simulate`,
   every result checked bit-exactly);
4. reports the comparison table and the headline figures (:mod:`innet.sim.report.summary`)
   and plots the embedding and the latency curves (:mod:`innet.sim.report.plots`).

The comparison runs with random backpressure at the endpoints (a testbench's duty: nothing may
be lost or duplicated when the endpoints stall); the headline figures are the network's own,
so the same simulation also runs the allreduces they need without backpressure
(:func:`quiet_scenarios`).

Everything is written to a fresh temporary directory beside the output directory and renamed
into place only when complete, so a failure never leaves a half-written output directory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ALGOS",
    "DEFAULT_SIZES",
    "FILES",
    "MIN_MEMORY",
    "QUICK_SIZES",
    "Build",
    "build",
    "check_replaceable",
    "quiet_scenarios",
    "replace_directory",
    "run_demo",
    "scenarios",
    "write_outputs",
]

#: The algorithms the demo compares, in table order.
ALGOS = ("innet", "swing-l", "swing-b", "recdoub", "ring")
#: Vector sizes (elements per node) of the full demo.
DEFAULT_SIZES = (1, 64, 1024, 4096)
#: Vector sizes of ``--quick``.
QUICK_SIZES = (1, 64)
#: Endpoint vector memory (elements) at least: :func:`innet.sim.network.simulate`'s default.
MIN_MEMORY = 1024
#: Files the demo writes, by role.
FILES = {"verilog": "network.v", "ports": "network.json", "image_bin": "image.bin",
         "image_hex": "image.hex", "image_json": "image.json", "report_json": "report.json",
         "report_md": "report.md", "embedding_png": "embedding.png",
         "latency_png": "latency.png"}

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Build:
    """Everything the demo generates before it simulates.

    Attributes
    ----------
    topology : Topology
    embedding : Embedding
        The in-network allreduce over every node.
    image : Image
        The network's configuration for that allreduce (routes, collective registers, vector
        length).
    design : Design
        The Verilog of the whole network.
    max_elements : int
    """

    topology: Any
    embedding: Any
    image: Any
    design: Any
    max_elements: int


def _check_sizes(sizes: Sequence[int]) -> tuple[int, ...]:
    sizes = tuple(sizes)
    if not sizes:
        raise ValueError("The demo needs at least one vector size")
    for m in sizes:
        if isinstance(m, bool) or not isinstance(m, int):
            raise TypeError(f"Vector sizes must be integers, not {m!r}")
        if m < 1:
            raise ValueError(f"Vector sizes must be at least 1 element, not {m}")
    return tuple(sorted(set(sizes)))


def build(topology: Any, max_elements: int, *, elements: int | None = None, op: str = "add",
          dtype: str = "fp32") -> Build:
    """Embedding, image and Verilog of ``topology`` for vectors up to ``max_elements``.

    The image configures the in-network allreduce of ``elements`` (default ``max_elements``)
    elements with the map parameters of the simulated network.

    Raises
    ------
    ValueError
        If the network cannot host the allreduce (from the generators).
    """
    from innet.gen.embed import embed
    from innet.gen.image import build_image
    from innet.gen.routing import routing
    from innet.hw.network import Network
    from innet.sim.network import cached_network, network_sizes

    embedding = embed(topology, op=op, dtype=dtype)
    # The network simulate wraps, and its map parameters so that the image loads into it.
    design, top = cached_network(Network, topology,
                                 f"innet_network_{topology.kind}{topology.nodes}",
                                 **network_sizes(topology, max_elements))
    image = build_image(topology, routes=routing(topology), embeddings=[embedding],
                        elements=max_elements if elements is None else elements, op=op,
                        dtype=dtype, **top.sizes())
    return Build(topology, embedding, image, design, max_elements)


def scenarios(sizes: Iterable[int], *, algos: Sequence[str] = ALGOS, op: str = "add",
              dtype: str = "fp32") -> list[Any]:
    """One allreduce over every node per size and algorithm, size-major."""
    from innet.sim.network import Scenario

    return [Scenario(algo=a, elements=m, op=op, dtype=dtype, name=f"{a} {m}")
            for m in sizes for a in algos]


def quiet_scenarios(sizes: Iterable[int], *, algos: Sequence[str] = ALGOS, op: str = "add",
                    dtype: str = "fp32") -> list[Any]:
    """The allreduces the headline figures need (:func:`innet.sim.report.summary.headline`),
    without endpoint backpressure: in-network and Swing-L of one element, and in-network of
    :data:`~innet.sim.report.summary.THROUGHPUT_ELEMENTS` elements if the demo's ``sizes``
    reach it (so that the endpoints' memory holds it). The demo's own runs of the same sizes
    are not reused: those have backpressure."""
    from innet.sim.network import Scenario
    from innet.sim.report.summary import THROUGHPUT_ELEMENTS

    wanted = []
    if "innet" in algos and "swing-l" in algos:
        wanted += [("innet", 1), ("swing-l", 1)]
    if "innet" in algos and max(sizes) >= THROUGHPUT_ELEMENTS:
        wanted.append(("innet", THROUGHPUT_ELEMENTS))
    return [Scenario(algo=a, elements=m, op=op, dtype=dtype, backpressure=0.0,
                     name=f"{a} {m} (no backpressure)") for a, m in wanted]


def check_replaceable(target: Path, names) -> None:
    """Refuse an output directory that replacing as a whole would harm: the working directory
    or one that holds it, or an existing directory holding anything but files named in
    ``names`` (what the command writes: an earlier output of it, or an empty directory, is
    replaced).

    Raises
    ------
    ValueError
        Naming ``target`` and the reason.
    """
    here = Path.cwd().resolve()
    whole = target.resolve()
    if whole == here or whole in here.parents:
        raise ValueError(f"Output '{target}' holds the working directory, and the output is "
                         f"replaced as a whole: name a directory of its own")
    if not target.is_dir():
        return
    foreign = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in target.iterdir()
                     if entry.name not in names or not entry.is_file())
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3
                                          else "")
        raise ValueError(f"Output '{target}' holds {shown}, which this command does not write, "
                         f"and the output is replaced as a whole: name a new directory")


def replace_directory(staging: Path, target: Path) -> None:
    """Move the complete ``staging`` directory to ``target``, replacing what was there.

    The old directory is renamed aside first and removed only after the new one is in place.

    Raises
    ------
    ValueError
        If ``target`` exists and is not a directory.
    """
    if target.exists() and not target.is_dir():
        raise ValueError(f"Output {str(target)!r} exists and is not a directory")
    aside = None
    if target.exists():
        aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
        try:
            os.replace(target, aside / target.name)
        except BaseException:
            aside.rmdir()
            raise
    try:
        os.replace(staging, target)
    except BaseException:
        if aside is not None:
            os.replace(aside / target.name, target)
            shutil.rmtree(aside, ignore_errors=True)
        raise
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)


def write_outputs(target: Path, files: dict[str, str | bytes],
                  write: Callable[[Path], None] | None = None,
                  names: Sequence[str] | None = None) -> dict[str, str]:
    """Write ``files`` (name -> content) into a staging directory, then move it to ``target``.

    ``write(staging)`` may add more files (the Verilog); ``names`` are all the files the
    command writes (default: those of ``files``). Returns the paths written, by name.

    Raises
    ------
    ValueError
        If ``target`` may not be replaced (:func:`check_replaceable`, with ``names``).
    """
    target = Path(target)
    check_replaceable(target, list(files) if names is None else list(names))
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new.", dir=target.parent))
    try:
        if write is not None:
            write(staging)
        for name, data in files.items():
            mode = "wb" if isinstance(data, bytes) else "w"
            with open(staging / name, mode) as handle:
                handle.write(data)
        # mkdtemp makes the directory 0700; give it the mode a plain mkdir would have.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)
        replace_directory(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {name: str(target / name) for name in sorted(os.listdir(target))}


def run_demo(output: str | os.PathLike, *, q: int = 3, sizes: Sequence[int] = DEFAULT_SIZES,
             algos: Sequence[str] = ALGOS, op: str = "add", dtype: str = "fp32", seed: int = 0,
             backpressure: float = 0.25, progress: Progress | None = None) -> dict[str, Any]:
    """Build, simulate, report and write everything to ``output`` (module documentation).

    Parameters
    ----------
    output : path
        Output directory (replaced as a whole when the demo completes).
    q : int
        PolarFly parameter (default 3: 13 switches).
    sizes : sequence of int
        Vector sizes in elements per node.
    algos : sequence of str
        Algorithms to compare (:data:`ALGOS`).
    op, dtype : str
        Reduction and element type.
    seed : int
        Seed of the test vectors and the random backpressure.
    backpressure : float
        Probability that an endpoint's local-link credit is held back in a cycle
        (:func:`innet.sim.network.simulate`) in the compared runs; with a backpressure, the
        headline figures' runs are added without it (:func:`quiet_scenarios`).
    progress : callable, optional
        ``progress(stage, done, total)`` as the demo advances.

    Returns
    -------
    dict
        The report (:func:`innet.sim.report.summary.build_report`) with ``files`` (the paths
        written) and ``wall_seconds``.

    Raises
    ------
    ValueError, TypeError
        For a bad size, algorithm, operation, type or backpressure; nothing is written then.
    """
    from innet.gen.image import encode
    from innet.gen.topology import polarfly
    from innet.sim.network import check_backpressure, simulate
    from innet.sim.report import plots
    from innet.sim.report.summary import build_report, network_summary, to_markdown

    start = time.monotonic()
    sizes = _check_sizes(sizes)
    check_backpressure(backpressure)
    say = progress or (lambda stage, done, total: None)
    say("generate topology, embedding, image, Verilog", 0, 1)
    topology = polarfly(q)
    runs = scenarios(sizes, algos=algos, op=op, dtype=dtype)
    # simulate's default memory (1,024 elements) unless a vector needs more: one build shared
    # with every other simulation of this network.
    memory = max(MIN_MEMORY, max(sizes))
    quiet = quiet_scenarios(sizes, algos=algos, op=op, dtype=dtype) if backpressure else []
    made = build(topology, memory, elements=max(sizes), op=op, dtype=dtype)
    say("generate topology, embedding, image, Verilog", 1, 1)
    total = len(runs) + len(quiet)
    say("simulate (Verilator)", 0, total)
    every = simulate(topology, [*runs, *quiet], seed=seed, max_elements=memory,
                     backpressure=backpressure,
                     progress=lambda done, _total: say("simulate (Verilator)", done, total))
    outcomes, quiet_runs = every[:len(runs)], every[len(runs):]
    say("report", 0, 1)
    wall = time.monotonic() - start
    files = {FILES["image_bin"]: encode(made.image, "bin"),
             FILES["image_hex"]: encode(made.image, "hex"),
             FILES["image_json"]: encode(made.image, "json"),
             FILES["embedding_png"]: plots.embedding_png(topology, made.embedding),
             FILES["latency_png"]: plots.latency_png(
                 outcomes, title=f"allreduce on {topology.title} ({topology.nodes} switches), "
                                 f"{op} {dtype}")}
    extra = {"files": sorted([*files, FILES["verilog"], FILES["ports"],
                              FILES["report_json"], FILES["report_md"]]),
             "design_digest": made.design.digest, "image_crc": _crc(made.image),
             "embedding": {"root": made.embedding.root, "depth": made.embedding.depth},
             "sizes": list(sizes), "op": op, "dtype": dtype, "seed": seed,
             "backpressure": backpressure, "wall_seconds": round(wall, 1)}
    report = build_report(outcomes, network=network_summary(topology),
                          title=f"innet demo: allreduce on {topology.title}", extra=extra,
                          quiet_runs=quiet_runs)
    import json

    files[FILES["report_json"]] = json.dumps(report, indent=2, sort_keys=True) + "\n"
    files[FILES["report_md"]] = to_markdown(report)
    written = write_outputs(Path(output), files,
                            write=lambda d: made.design.write(d / FILES["verilog"]),
                            names=list(FILES.values()))
    say("report", 1, 1)
    report["written"] = written
    return report


def _crc(image: Any) -> str:
    from innet.gen.image.binary import crc32

    return f"{crc32(image):08x}"
