"""Whole-network simulation: scenarios in, checked outcomes out.

The Python API over :mod:`innet.hw.network` (the Verilog of a whole network),
:mod:`innet.sim.loader` (the image loader) and :mod:`innet.sim.tb_network` (the cocotb
testbench). A :class:`Scenario` says what to run (an in-network collective, or a host schedule
through the endpoints' step tables, with optional background p2p traffic); :func:`simulate`
runs a list of them in ONE Verilator simulation and returns one :class:`Outcome` per scenario,
each checked bit-exactly against the golden models (:mod:`innet.sim.golden` for in-network
reduction orders, :mod:`innet.gen.swing`'s executor for step schedules).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["ALGOS", "KINDS", "PATTERNS", "Outcome", "Scenario"]

#: Algorithms a :class:`Scenario` may name.
ALGOS = ("innet", "swing-l", "swing-b", "recdoub", "ring")
#: Collective kinds of an in-network scenario.
KINDS = ("allreduce", "reduce", "broadcast", "barrier")
#: Background traffic patterns.
PATTERNS = ("uniform", "permutation")


@dataclass(frozen=True)
class Scenario:
    """One collective to run on the simulated network.

    Attributes
    ----------
    algo : str
        ``"innet"`` (the switches' collective engines over an embedding), or a host schedule
        run by the endpoints' step engines: ``"swing-l"``, ``"swing-b"`` (Swing, latency- and
        bandwidth-optimal), ``"recdoub"`` (recursive doubling), ``"ring"``.
    elements : int
        Vector length per node (>= 0; 0 only for a barrier).
    op, dtype : str
        :mod:`innet.gen.ops` names.
    kind : str
        In-network only: ``"allreduce"``, ``"reduce"``, ``"broadcast"`` or ``"barrier"``.
    participants : tuple of int or None
        In-network only; ``None`` means every node.
    root : int or None
        In-network only; ``None`` means the embedding's default root.
    collective_id : int
        In-network only: the switches' collective id.
    background : float
        Background p2p load per node, 0..1 (flits per cycle offered by each node's host).
    pattern : str
        ``"uniform"`` (random destination per flit) or ``"permutation"`` (a fixed random
        derangement).
    name : str
        Free label for reports.
    """

    algo: str
    elements: int
    op: str = "add"
    dtype: str = "int32"
    kind: str = "allreduce"
    participants: tuple[int, ...] | None = None
    root: int | None = None
    collective_id: int = 0
    background: float = 0.0
    pattern: str = "uniform"
    name: str = ""


@dataclass(frozen=True)
class Outcome:
    """What a :class:`Scenario` did on the RTL network.

    Attributes
    ----------
    scenario : Scenario
    correct : bool
        Every node's result bit-exact against the golden model.
    latency_cycles : int
        From the first start command to the last ``done``.
    throughput_elems_per_cycle : float
        ``elements / latency_cycles``.
    predicted_cycles : float or None
        The :mod:`innet.gen.cost` prediction for the same run.
    p2p_sent, p2p_received : int
        Background flits injected and delivered (equal when nothing was lost).
    detail : str
        The first mismatch or another note; ``""`` when correct.
    """

    scenario: Scenario
    correct: bool
    latency_cycles: int
    throughput_elems_per_cycle: float
    predicted_cycles: float | None
    p2p_sent: int
    p2p_received: int
    detail: str = ""

    def to_dict(self) -> dict:
        """JSON-ready form: the scenario's fields under ``"scenario"`` and every result key."""
        out = asdict(self)
        sc = out["scenario"]
        if sc["participants"] is not None:
            sc["participants"] = list(sc["participants"])
        return out
