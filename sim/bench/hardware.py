"""Hardware cost benchmarks: ``innet synth`` figures of the switch, its round robin, the
collective engine and the reduction unit on the ECP5 target (:mod:`innet.sim.synth`).

Switch variants, at radix 4, 8 and 16 (32-bit payload, 4 collective ids, the other parameters
at their defaults):

- ``ceng``: the switch as ``innet verilog switch`` emits it by default, with the collective
  engine (:class:`innet.hw.ceng.CollectiveEngine`, its multi-operand reduction unit without
  multipliers: in-network reduction of every operation of :mod:`innet.gen.ops` but ``mul``);
- ``passthrough`` (radix 4 and 8): with the pass-through collective path
  (:class:`innet.hw.collective.CollectivePath`: forwarding, no reduction);
- ``p2p``: the p2p switch (``Switch(collective=None)``): no collective path, no response
  buffers or forks, credits for the p2p VCs only. The flit format keeps one collective id
  (``FlitParams`` needs ``collective_ids >= 1``), so the register file keeps that id's
  registers. "Collective support" measured against it (``ceng`` minus ``p2p``) is the engine,
  the response multicast and the collective VCs' credits and registers.

The collective path is always passed explicitly (``Switch(collective=...)``), so a change of
the switch's default does not change what a row measures.

The timing case (``hw_timing_r4_p2p``) is the regression check of the switch's speed: the
radix-4 p2p switch (as ``innet synth switch --radix 4 --collective-ids 1 --collective none``
builds it) synthesised once and placed and routed with seeds :data:`TIMING_SEEDS` side by
side (about 10 minutes on two free cores), with its fmax per seed, its logic cells, the cells
per block of its hierarchy and its worst paths. Its goals are bench data
(:data:`TIMING_GOAL_MHZ`, :data:`TIMING_SEED_GOAL_MHZ`, :data:`TIMING_SEEDS_NEEDED`), judged
in :func:`innet.sim.bench.report.targets`.

``hw_round_robin_<n>``: the round robin with which an output of the radix ``n - 1`` switch
grants (:class:`innet.hw.arbiter.RoundRobin`, ``n`` requesters), alone, every port registered:
its grant and the update of its priority in one cycle, the least that any single-cycle
allocation of that switch takes.
"""

from __future__ import annotations

from typing import Any

from innet.sim.bench import Options, case

__all__ = [
    "TIMING_DEPTH",
    "TIMING_GOAL_MHZ",
    "TIMING_PATHS",
    "TIMING_SEEDS",
    "TIMING_SEEDS_NEEDED",
    "TIMING_SEED_GOAL_MHZ",
    "synth_case",
    "timing_case",
]

#: Switch radices measured in a full run.
RADICES = (4, 8, 16)

#: Placement seeds of the timing case.
TIMING_SEEDS = (1, 2, 3)
#: The timing case's fmax goal on the first seed (MHz): the switch's target clock.
TIMING_GOAL_MHZ = 150.0
#: ... and the fmax that :data:`TIMING_SEEDS_NEEDED` of :data:`TIMING_SEEDS` must reach.
TIMING_SEED_GOAL_MHZ = 140.0
TIMING_SEEDS_NEEDED = 2
#: Hierarchy levels of the timing case's breakdown, and worst paths kept per seed.
TIMING_DEPTH = 2
TIMING_PATHS = 5


def synth_case(component: Any, name: str, params: dict[str, Any],
               options: Options) -> dict[str, Any]:
    """Emit and synthesise ``component`` on the ECP5 target; the result as a dict (placed and
    routed unless the run's options say not, within their timeout)."""
    from innet.hw.verilog import emit
    from innet.sim import synth

    synth.check_tools("ecp5")
    design = emit(component, name)
    result = synth.synthesize(design, "ecp5", seed=options.seed, pnr=options.pnr,
                              timeout=options.timeout, cache_only=options.cached)
    return {"params": params, **result.as_json()}


def _switch_top(radix: int, variant: str) -> tuple[Any, dict[str, Any]]:
    from innet.hw.variants import make_switch, switch_collective

    ids = 1 if variant == "none" else 4
    top, params = make_switch(radix, collective_ids=ids, collective=switch_collective(variant))
    params["collective_path"] = variant
    return top, params


def _switch(radix: int, variant: str, options: Options) -> dict[str, Any]:
    top, params = _switch_top(radix, variant)
    return synth_case(top, "innet_switch", params, options)


def timing_case(component: Any, name: str, params: dict[str, Any],
                options: Options) -> dict[str, Any]:
    """Emit ``component`` (or take it as it is if it is a ``Design`` already), synthesise it
    once and place and route it with each of :data:`TIMING_SEEDS` side by side on the ECP5
    target.

    Returns the first seed's result (as :func:`synth_case`) with ``seeds`` (per seed: fmax,
    place-and-route status and seconds, critical path, the :data:`TIMING_PATHS` worst
    endpoints), ``seed_summary`` (:func:`innet.sim.synth.seed_summary`), ``breakdown`` (the
    cells per block, :data:`TIMING_DEPTH` levels) and the goals (``goal_mhz``,
    ``seed_goal_mhz``, ``seeds_needed``).
    """
    from innet.hw.verilog import Design, emit
    from innet.sim import synth

    synth.check_tools("ecp5")
    design = component if isinstance(component, Design) else emit(component, name)
    results = synth.synthesize_seeds(design, "ecp5", TIMING_SEEDS, pnr=options.pnr,
                                     timeout=options.timeout, cache_only=options.cached,
                                     jobs=len(TIMING_SEEDS))
    seeds = [{"seed": r.seed, "fmax_mhz": r.fmax_mhz, "pnr": r.pnr,
              "placed_fmax_mhz": r.placed_fmax_mhz, "note": r.note,
              "pnr_seconds": r.tool_seconds["pnr"], "cached": r.cached,
              "critical_path": r.critical_path, "paths": list(r.paths)[:TIMING_PATHS]}
             for r in results]
    first = results[0].as_json()
    first["paths"] = seeds[0]["paths"]
    return {"params": params, **first, "seeds": seeds,
            "seed_summary": synth.seed_summary([r.as_json() for r in results]),
            "breakdown": synth.breakdown(results[0].blocks, TIMING_DEPTH),
            "goal_mhz": TIMING_GOAL_MHZ, "seed_goal_mhz": TIMING_SEED_GOAL_MHZ,
            "seeds_needed": TIMING_SEEDS_NEEDED}


_VARIANTS = (("ceng", "collective engine"), ("passthrough", "pass-through collective path"),
             ("p2p", "no collective path, 1 collective id"))


#: The pass-through variant (the collective VCs without the engine) is measured at radix 4
#: and 8 (the radix of the pass-through's size target); the radix-16 one would cost another
#: long synthesis.
PASSTHROUGH_RADICES = (4, 8)


def _register_switches() -> None:
    for radix in RADICES:
        for name, what in _VARIANTS:
            if name == "passthrough" and radix not in PASSTHROUGH_RADICES:
                continue
            variant = {"p2p": "none", "ceng": "engine", "passthrough": "pass"}[name]

            def run(options: Options, radix: int = radix, variant: str = variant
                    ) -> dict[str, Any]:
                return _switch(radix, variant, options)

            case(f"hw_switch_r{radix}_{name}", "hardware", f"Switch radix {radix}, {what}")(run)


_register_switches()


@case("hw_timing_r4_p2p", "hardware",
      "Timing case: switch radix 4, no collective path, 1 collective id, seeds "
      + ", ".join(map(str, TIMING_SEEDS)))
def _timing(options: Options) -> dict[str, Any]:
    top, params = _switch_top(4, "none")
    return timing_case(top, "innet_switch", params, options)


@case("hw_ceng", "hardware", "Collective engine alone (radix 8, 4 ids, 32-bit, no multipliers)")
def _ceng(options: Options) -> dict[str, Any]:
    from innet.hw.ceng import CollectiveEngine
    from innet.hw.ceng.top import EngineTop
    from innet.hw.flit import FlitParams

    engine = CollectiveEngine(FlitParams(payload_width=32, collective_ids=4), 8, mul=False)
    return synth_case(EngineTop(engine), "innet_ceng",
                      {"radix": 8, "collective_ids": 4, "payload_width": 32, "mul": False},
                      options)


def _register_arbiters() -> None:
    for radix in RADICES:
        count = radix + 1

        def run(options: Options, count: int = count) -> dict[str, Any]:
            from innet.hw.arbiter import RoundRobin

            return synth_case(RoundRobin(count), "innet_round_robin", {"count": count},
                              options)

        case(f"hw_round_robin_{count}", "hardware",
             f"Round robin of {count} requesters alone (an output of the radix-{radix} "
             f"switch)")(run)


_register_arbiters()


def _register_reductions() -> None:
    """The engine's reduction datapath of each radix alone: the multi-operand unit and, for
    comparison, a tree of pairwise ALUs (``innet synth reduction``)."""
    for radix in RADICES:
        leaves = radix + 1
        for datapath in ("multi", "tree"):
            def run(options: Options, leaves: int = leaves, datapath: str = datapath
                    ) -> dict[str, Any]:
                if datapath == "multi":
                    from innet.hw.alu.multi import MultiOperandUnit

                    unit = MultiOperandUnit(leaves)
                else:
                    from innet.hw.ceng.tree import ReductionTree

                    unit = ReductionTree(leaves, mul=False)
                return synth_case(unit, "innet_reduction",
                                  {"leaves": leaves, "datapath": datapath, "mul": False},
                                  options)

            what = ("multi-operand unit" if datapath == "multi"
                    else f"tree of {radix} pairwise ALUs")
            case(f"hw_reduction_{datapath}_{leaves}", "hardware",
                 f"Reduction datapath of the radix-{radix} engine: {what}, {leaves} operands")(run)


_register_reductions()


@case("hw_alu_add", "hardware", "binary32 adder: ALU without multiplier (add, min, max)")
def _alu_add(options: Options) -> dict[str, Any]:
    from innet.hw.alu import ALU

    return synth_case(ALU(mul=False), "innet_alu", {"mul": False}, options)


@case("hw_alu", "hardware", "ALU with multiplier (every operation of gen.ops)")
def _alu(options: Options) -> dict[str, Any]:
    from innet.hw.alu import ALU

    return synth_case(ALU(), "innet_alu", {"mul": True}, options)


@case("hw_muladd", "hardware", "MulAdd(8) of innet doctor (flow check)", quick=True,
      full=False)
def _muladd(options: Options) -> dict[str, Any]:
    from innet.hw.testing import MulAdd

    return synth_case(MulAdd(8), "innet_muladd", {"width": 8}, options)
