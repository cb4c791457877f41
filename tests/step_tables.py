"""The host-style cost model's alpha walked from the step tables, entry by entry, as an
independent check of :meth:`innet.gen.swing.cost.Congestion.cost` (the tests of
``innet.gen.compare`` and ``innet.gen.swing.cost``).

The model is the project's endpoint (:class:`innet.hw.endpoint.engine.StepEngine`): it runs its
step table one entry after another over its one port.
"""

from innet.gen.swing.cost import EMPTY_ENTRY

__all__ = ["table_alpha"]


def table_alpha(schedule, overhead: float, latency) -> float:
    """The alpha of an endpoint that runs its step table one entry after another, walked from
    the tables, each route's latency ``latency(u, v)``. An entry that moves data takes the
    longer of its receive (the clear-to-send's trip to its receive peer beside the drain
    before it, ``overhead``, then the data's trip back) and its send (the peer's clear-to-send,
    sent during the same drain); an empty one EMPTY_ENTRY cycles, and none at a step and
    collective where no rank moves data (no table holds it). A step lasts as long as its
    slowest rank's entries."""
    held = {(e.step, e.collective) for r in range(schedule.ranks) for e in schedule.table(r)
            if not e.idle}
    total = 0.0
    for step in range(schedule.steps):
        slowest = 0.0
        for r in range(schedule.ranks):
            cycles = 0.0
            for e in schedule.table(r):
                if e.step != step:
                    continue
                if e.idle:
                    cycles += EMPTY_ENTRY if (e.step, e.collective) in held else 0.0
                    continue
                sent = latency(r, e.send_peer) if e.send_peer is not None else 0.0
                received = latency(e.recv_peer, r) if e.recv_peer is not None else 0.0
                cycles += max(max(overhead, received) + received, max(overhead, sent))
            slowest = max(slowest, cycles)
        total += slowest
    return total
