"""Synthesis targets: one TOML file per target, read by :mod:`innet.sim.synth`.

Each file says which device it targets, what it constrains (the clock ``clk`` of every innet
top level, and for ECP5 that the design is placed out of context) and why. ``innet synth
--target NAME`` reads ``NAME.toml`` from here; the files install with the package so that an
installed ``innet`` finds them.
"""

__all__: list[str] = []
