"""ALT: bidirectional A* whose potentials are landmark bounds max'ed with the great-circle bound.

Landmark tables (`preprocessing.landmarks`): `lm_from[v, L] = d(L, v)`, `lm_to[v, L] = d(v, L)`, uint32 ds, exact,
`0xFFFFFFFF` = unreachable. With seeds, S and T are virtual nodes: arcs S -> s_i of weight sw_i and t_j -> T of
weight tw_j. The per-query constants for landmark L (over the finite table entries) are

    Y  = min_j (d(L, t_j) + tw_j)        = d(L, T)           (target side, needs some finite d(L, t_j))
    X  = max_j (d(t_j, L) - tw_j)                            (target side, needs every d(t_j, L) finite)
    X' = max_i (d(L, s_i) - sw_i)                            (source side, needs every d(L, s_i) finite)
    Y' = min_i (sw_i + d(s_i, L))        = d(S, L)           (source side, needs some finite d(s_i, L))

giving the terms `pi_t(v) >= Y - d(L, v)`, `pi_t(v) >= d(v, L) - X`, `pi_s(v) >= d(L, v) - X'`,
`pi_s(v) >= Y' - d(v, L)`, each with `pi_t(T) = 0` / `pi_s(S) = 0`. Each is consistent on every real arc (triangle
inequality of the exact table) and on the virtual arcs by the min/max above (`Y - d(L, t_j) <= tw_j`,
`d(t_j, L) - X <= tw_j`, ...). Unreachable entries: a "Y - d" term is skipped at v (an arc u -> v with d(L, u)
finite has d(L, v) finite, so skipping stays consistent); a "d - X" term takes a huge finite value (LM_BIG) at v,
which is consistent because such a v reaches no seed the term was built from (that is why X needs all seeds finite).
The maximum of consistent bounds is consistent, so `app.engine.astar`'s average potentials and stopping rule apply.
A "d - X" term of LM_BIG at every source seed proves T unreachable: the search returns at once.

Active landmarks: per query the `active` landmarks with the largest bound on d(S, T) (evaluated at the seeds of
both ends) are used, ties to the lower landmark index. `app.engine.astar.landmark_setup` computes the constants
and the choice inside the search's one numba call.
"""

from __future__ import annotations

import numpy as np

from preprocessing.artifacts import Graph

from .astar import BidirectionalAStarSearch, landmark_setup
from .errors import GraphError

__all__ = ["ALTSearch", "landmark_setup"]


class ALTSearch(BidirectionalAStarSearch):
    """Bidirectional ALT: `active` landmarks per query, their bounds max'ed with the great-circle bound.

    Needs the `lm_from` / `lm_to` tables (`starroute preprocess --landmarks N`).
    """

    algorithm = "alt"

    def __init__(self, graph: Graph, active: int = 4) -> None:
        super().__init__(graph)
        if not (graph.has("lm_from") and graph.has("lm_to")):
            raise GraphError("graph has no ALT landmarks: re-run `starroute preprocess` with --landmarks N")
        self.lm_from = np.asarray(graph.lm_from)
        self.lm_to = np.asarray(graph.lm_to)
        assert self.lm_from.dtype == np.uint32 and self.lm_from.shape == self.lm_to.shape, "bad landmark tables"
        k = max(1, min(active, self.lm_from.shape[1]))
        self.cols = np.zeros(k, dtype=np.int32)
        self.consts = np.zeros((k, 4), dtype=np.int64)
        self.valid = np.zeros((k, 4), dtype=np.uint8)
        self.lm_max = k if active > 0 and self.lm_from.shape[1] > 0 else 0
