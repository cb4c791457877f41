"""Hardware cost benchmarks: ``innet synth`` figures of the switch, the collective engine and
the reduction unit on the ECP5 target (:mod:`innet.sim.synth`).

Switch variants, at radix 4, 8 and 16 (32-bit payload, 4 collective ids, the other parameters
at their defaults):

- ``passthrough``: the switch as ``innet verilog switch`` emits it, with the pass-through
  collective path (:class:`innet.hw.collective.CollectivePath`: forwarding, no reduction);
- ``p2p``: the switch without a collective path (:class:`NoCollectivePath`: nothing is sent or
  popped on the collective VCs). The switch cannot be built without collective ids
  (``FlitParams`` needs ``collective_ids >= 1``), so this variant keeps one collective id: its
  VC buffers, credit counters and registers remain. It is the closest p2p-only switch that
  :class:`innet.hw.switch.Switch` can express today;
- ``ceng``: with the collective engine (``innet.hw.ceng``, issue 8), pending until it lands.
"""

from __future__ import annotations

from typing import Any

from amaranth import Module

from innet.hw.collective import CollectivePath
from innet.sim.bench import REGISTRY, Case, Options, case

__all__ = ["NoCollectivePath", "synth_case"]

#: Switch radices measured in a full run.
RADICES = (4, 8, 16)


class NoCollectivePath(CollectivePath):
    """A collective path that does nothing: no flit is sent, popped or dropped.

    A benchmark fixture (not a hardware block): passed as ``Switch(collective=...)`` it leaves
    the p2p fabric alone, so the switch's cost without collective support can be compared with
    its cost with it. Same signature and parameters as
    :class:`~innet.hw.collective.CollectivePath`.
    """

    def elaborate(self, platform):
        return Module()


def synth_case(component: Any, name: str, params: dict[str, Any], options: Options
               ) -> dict[str, Any]:
    """Emit and synthesise ``component`` on the ECP5 target; the result as a dict."""
    from innet.hw.verilog import emit
    from innet.sim import synth

    synth.check_tools("ecp5")
    design = emit(component, name)
    result = synth.synthesize(design, "ecp5", seed=options.seed, pnr=options.pnr,
                              timeout=options.timeout)
    return {"params": params, **result.as_json()}


def _switch(radix: int, variant: str, options: Options) -> dict[str, Any]:
    from innet.sim.cli.verilog import make_switch

    extra = {"collective": NoCollectivePath} if variant == "p2p" else {}
    ids = 1 if variant == "p2p" else 4
    top, params = make_switch(radix, collective_ids=ids, **extra)
    params["collective_path"] = variant
    return synth_case(top, "innet_switch", params, options)


def _register_switches() -> None:
    for radix in RADICES:
        for variant, what in (("passthrough", "pass-through collective path"),
                              ("p2p", "no collective path, 1 collective id")):
            def run(options: Options, radix: int = radix, variant: str = variant
                    ) -> dict[str, Any]:
                return _switch(radix, variant, options)

            case(f"hw_switch_r{radix}_{variant}", "hardware",
                 f"Switch radix {radix}, {what}")(run)
        REGISTRY.append(Case(f"hw_switch_r{radix}_ceng", "hardware",
                             f"Switch radix {radix}, with the collective engine", None,
                             requires=("innet.hw.ceng", "issue 8")))


_register_switches()

REGISTRY.append(Case("hw_ceng", "hardware", "Collective engine (radix 8, 4 ids)", None,
                     requires=("innet.hw.ceng", "issue 8")))


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
    from innet.sim.doctor import MulAdd

    return synth_case(MulAdd(8), "innet_muladd", {"width": 8}, options)
