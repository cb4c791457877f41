"""The endpoint: a switch's local port with a vector memory, the in-network collective intrinsic
and a step engine for host-style allreduce.

Modules: :mod:`~innet.hw.endpoint.top` (:class:`Endpoint`, the component a network
instantiates), :mod:`~innet.hw.endpoint.intrinsic` (the collective intrinsic),
:mod:`~innet.hw.endpoint.engine` (the step engine), :mod:`~innet.hw.endpoint.protocol` (the
p2p message classes and the clear-to-send protocol, with its deadlock argument).
"""

from innet.hw.endpoint.engine import StepEngine, entry_layout
from innet.hw.endpoint.intrinsic import Intrinsic, status_layout
from innet.hw.endpoint.protocol import Message, cts_flit, data_flit, message_of
from innet.hw.endpoint.top import ERROR_FIELDS, Endpoint

__all__ = [
    "ERROR_FIELDS",
    "Endpoint",
    "Intrinsic",
    "Message",
    "StepEngine",
    "cts_flit",
    "data_flit",
    "entry_layout",
    "message_of",
    "status_layout",
]
