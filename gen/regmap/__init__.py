"""The register model: the single source of every configuration address and field.

Switch and endpoint register maps are declared with :class:`Field`, :class:`Register`,
:class:`Cluster` and :class:`Array` (:mod:`innet.gen.regmap.model`, which also states the
addressing and access rules), laid out by :class:`Map` (:mod:`innet.gen.regmap.addrmap`), and
exported as canonical JSON, a C header and a Markdown table (:mod:`innet.gen.regmap.export`).
The RTL register files and the configuration images are generated from the same maps.

>>> from innet.gen.regmap import switch_map
>>> m = switch_map(radix=8, collective_ids=4, routing_depth=16)
>>> m["coll[1].ctrl"].address
40
>>> hex(m["coll[1].ctrl"].encode({"enable": 1, "op": "max", "dtype": "fp32"}))
'0x221'
"""

from innet.gen.regmap.addrmap import ArrayInfo, Map, MappedRegister
from innet.gen.regmap.endpoint import (
    MAX_STEP_DEPTH,
    MAX_VECTOR_DEPTH,
    CollectiveMode,
    endpoint_map,
)
from innet.gen.regmap.export import to_c_header, to_json, to_markdown
from innet.gen.regmap.model import (
    FORMAT_VERSION,
    WORD_BITS,
    Access,
    Array,
    Cluster,
    Field,
    Register,
    Target,
)
from innet.gen.regmap.switch import (
    COLL_BURST,
    COLL_TIMEOUT,
    ERROR_FLAGS,
    MAX_COLLECTIVE_IDS,
    MAX_P2P_VCS,
    MAX_RADIX,
    MAX_ROUTING_DEPTH,
    mask_ports,
    node_id_bits,
    port_code,
    port_mask,
    port_width,
    switch_map,
)

__all__ = [
    "COLL_BURST",
    "COLL_TIMEOUT",
    "ERROR_FLAGS",
    "FORMAT_VERSION",
    "MAX_COLLECTIVE_IDS",
    "MAX_P2P_VCS",
    "MAX_RADIX",
    "MAX_ROUTING_DEPTH",
    "MAX_STEP_DEPTH",
    "MAX_VECTOR_DEPTH",
    "WORD_BITS",
    "Access",
    "Array",
    "ArrayInfo",
    "Cluster",
    "CollectiveMode",
    "Field",
    "Map",
    "MappedRegister",
    "Register",
    "Target",
    "endpoint_map",
    "mask_ports",
    "node_id_bits",
    "port_code",
    "port_mask",
    "port_width",
    "switch_map",
    "to_c_header",
    "to_json",
    "to_markdown",
]
