"""The endpoint's point-to-point protocol: message classes in the p2p tag, clear-to-send.

Every p2p flit an endpoint sends or receives carries its *message class* in the two low bits of
the flit's ``tag`` (:mod:`innet.hw.flit`); the bits above hold the low bits of the step-table
entry the flit belongs to (a check, not needed for correctness):

========  =====  =============================================================================
class     value  meaning
========  =====  =============================================================================
HOST      0      host traffic: sent from the endpoint's ``p2p_tx`` port, delivered to the
                 destination's ``p2p_rx`` port; the endpoint does not look inside
DATA      1      step-engine data: ``index`` is the element (relative to ``vec_base``),
                 ``payload`` its value, ``tag >> 2`` the entry (modulo ``2**(tag_width - 2)``)
CTS       2      clear to send: ``index`` is the step-table entry ``k``; its receiver may send
                 the data of entry ``k`` to the flit's source
========  =====  =============================================================================

Clear-to-send protocol (per step-table entry ``k``)
---------------------------------------------------
Every endpoint runs its step table in order (:meth:`innet.gen.swing.Schedule.table`; the image
puts the same ``(step, collective)`` slot in entry ``k`` of every endpoint, and a send in entry
``k`` is received in the peer's entry ``k``). In entry ``k`` an endpoint

1. sends one CTS flit for ``k`` to its ``recv_peer`` (if the entry receives), on entering ``k``
   or already at the end of entry ``k - 1``: as soon as all that is left of ``k - 1`` is local
   (its reduction pipeline draining), the *early CTS*, which hides the drain and the load of
   the next entry behind the CTS's trip (with ``tag_width`` at least 3, so that DATA flits of
   consecutive entries differ in the tag);
2. copies the elements it sends into a scratch buffer (a *snapshot*, local, one per cycle), so
   that the send carries the values from before this entry's receive even when the send and
   receive ranges overlap (the latency-optimal algorithms send and receive the whole vector);
3. sends the entry's data from the snapshot to ``send_peer`` once it holds a CTS for ``k``
   (CTS flits are absorbed on arrival into one bit per entry, whatever the engine is doing);
4. receives ``recv_count`` DATA flits, reducing each into the vector with ``hw.alu``
   (``combine(op, dtype, local, received)``) or copying it; a received element that the snapshot
   has not copied yet waits for it (a purely local wait);
5. leaves the entry when the CTS is sent, the send is done, every element is received and the
   reduction pipeline has written its last result, so entry ``k + 1`` reads final values.

Why nothing is lost and nothing deadlocks
-----------------------------------------
*Data arrives only for the current entry, or for the next one while the current one finishes
locally.* An endpoint sends CTS ``k`` only in entry ``k``, or in entry ``k - 1`` once that
entry's data has all arrived and its send is done; it leaves entry ``k`` only after all of its
data arrived; only ``recv_peer`` gets the CTS, so no other source sends data for ``k``. Data
of a faster peer for any later entry cannot exist: it waits at the sender, in the sender's own
memory, for the CTS. Data for ``k`` that arrives during the end of ``k - 1`` waits at the head
of the receive buffer for at most the reduction pipeline's drain and one load cycle.

*The ejection port never blocks on the future.* Every flit delivered to an endpoint is taken
without waiting for anything outside the endpoint: CTS flits at once (a bit per entry), DATA
flits at line rate (the only waits, for the snapshot and for the end of the previous entry, end
after at most ``send_count`` and ``innet.hw.alu.LATENCY + 3`` local cycles), HOST flits by the
host (which must not wait for the network). So p2p flits are always
drained from the network, and the network (hop-indexed p2p VCs, credits) delivers every flit.

*Every entry completes* (by contradiction): take the smallest entry ``k`` at which some
endpoint ``R`` waits forever. Its ``send_peer`` ``S`` and ``recv_peer`` ``Q`` have completed
every entry before ``k`` (by minimality), and cannot complete ``k`` without ``R`` (they
exchange data with ``R`` in ``k``), so both are in entry ``k``. ``R`` sent CTS ``k`` to ``Q``
on entering ``k``; it is delivered, so ``Q`` sends its data, which is delivered and consumed.
``S`` sent CTS ``k`` to ``R`` (delivered, absorbed), so ``R``'s own send starts and its flits
are consumed at ``S``. The snapshot is local. So ``R`` completes ``k``: a contradiction.

*CTS bits are never confused between runs.* A CTS bit ``k`` is set by the one node that
receives from this endpoint in entry ``k`` and cleared when this endpoint sends entry ``k``'s
data. If that node runs the same table again (a new start), it has finished entry ``k`` of the
previous run, which needed this endpoint's data of ``k``: the previous bit was already used. A
new table may be written only while every endpoint of the network is idle (the network is then
empty of CTS and data flits).
"""

from __future__ import annotations

import enum

from innet.hw.flit import Flit, FlitParams, Kind

__all__ = [
    "CLASS_BITS",
    "Message",
    "cts_flit",
    "data_flit",
    "entry_bits",
    "message_of",
]

#: Low bits of the p2p tag that hold the message class.
CLASS_BITS = 2


class Message(enum.IntEnum):
    """Message class of a p2p flit (the low :data:`CLASS_BITS` of its tag)."""

    HOST = 0
    DATA = 1
    CTS = 2


def entry_bits(params: FlitParams) -> int:
    """Bits of the step-table entry a DATA or CTS tag carries above the class."""
    return params.tag_width - CLASS_BITS


def _tag(params: FlitParams, message: Message, entry: int) -> int:
    return (entry % (1 << entry_bits(params))) << CLASS_BITS | int(message)


def message_of(flit: Flit) -> Message | None:
    """The message class of a p2p flit (None for collective flits or the unused class 3)."""
    if flit.kind is not Kind.P2P:
        return None
    code = flit.tag & ((1 << CLASS_BITS) - 1)
    return Message(code) if code in Message._value2member_map_ else None


def data_flit(params: FlitParams, src: int, dst: int, entry: int, index: int,
              payload: int) -> Flit:
    """The DATA flit an endpoint sends for element ``index`` of step-table entry ``entry``."""
    return Flit.p2p(dst, src, payload, tag=_tag(params, Message.DATA, entry), index=index)


def cts_flit(params: FlitParams, src: int, dst: int, entry: int) -> Flit:
    """The clear-to-send flit for step-table entry ``entry``."""
    return Flit.p2p(dst, src, 0, tag=_tag(params, Message.CTS, entry), index=entry)
