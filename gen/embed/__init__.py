"""In-network collective embeddings: PIUMA's dynamic embedding and everything around it.

- :func:`embed` ``(topo, participants=None, *, root="auto", kind="allreduce", op="add",
  dtype="int32", collective_id=0, failed_links=None, failed_switches=None) -> Embedding``:
  the dynamic embedding (PIUMA, "Allreduce Embedding"): minimum-eccentricity root, every
  participant's minimal path to it, reductions where paths meet, the inverse for responses.
- :class:`Embedding` / :class:`SwitchConfig`: the cross-team contract (per switch ``req_in``,
  ``req_out``, ``resp_in``, ``resp_out``; ``op``, ``dtype``, ``root``, ``participants``,
  ``collective_id``, ``kind``).
- :func:`verify` ``(embedding_or_list, topo)``: the properties of a valid embedding; one clear
  ``ValueError`` naming the switch, port or link. :func:`reconstruct` rebuilds an embedding
  from switch configurations (decoded registers).
- :func:`check_disjoint`, :func:`assign_collective_ids`: several collectives at once.
- :func:`stripe`: one vector over several trees (:class:`Striping`, per-link load, gain).
- :class:`CostModel`, :func:`embedding_cost` -> :class:`Cost` (PIUMA Eq. 1-2,
  ``T(m) = alpha + beta * m`` in cycles; the model is :mod:`innet.gen.cost`'s, shared with the
  host-style algorithms); :func:`crossover` and :mod:`innet.gen.compare` to compare them.
"""

from innet.gen.embed.cost import (
    Cost,
    CostModel,
    crossover,
    embedding_cost,
    path_latencies,
    response_latencies,
)
from innet.gen.embed.dynamic import embed
from innet.gen.embed.plan import assign_collective_ids, check_disjoint, conflict
from innet.gen.embed.reconstruct import reconstruct
from innet.gen.embed.root import root_keys
from innet.gen.embed.stripe import Striping, stripe
from innet.gen.embed.types import KINDS, Embedding, SwitchConfig
from innet.gen.embed.verify import verify

__all__ = [
    "KINDS",
    "Cost",
    "CostModel",
    "Embedding",
    "Striping",
    "SwitchConfig",
    "assign_collective_ids",
    "check_disjoint",
    "conflict",
    "crossover",
    "embed",
    "embedding_cost",
    "path_latencies",
    "reconstruct",
    "response_latencies",
    "root_keys",
    "stripe",
    "verify",
]
