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
both ends) are used, ties to the lower landmark index.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from preprocessing.artifacts import Graph

from .astar import LM_BIG, LM_NONE, BidirectionalAStarSearch
from .errors import GraphError

_NEG = -(np.int64(1) << np.int64(62))
_POS = np.int64(1) << np.int64(62)


@nb.njit(cache=True, nogil=True)
def alt_setup(lm_from, lm_to, s_nodes, s_w, t_nodes, t_w, cols, consts, valid):  # pragma: no cover - numba
    """Fill the per-query landmark constants (module docstring) for the best `len(cols)` landmarks.

    Returns the number of active landmarks, or -1 when a landmark proves that no target seed is reachable.
    """
    k_all = lm_from.shape[1]
    est = np.full(k_all, -1, dtype=np.int64)
    c_all = np.zeros((k_all, 4), dtype=np.int64)
    v_all = np.zeros((k_all, 4), dtype=np.uint8)
    for L in range(k_all):
        y = _POS
        for j in range(t_nodes.shape[0]):
            f = lm_from[t_nodes[j], L]
            if f != LM_NONE and np.int64(f) + t_w[j] < y:
                y = np.int64(f) + t_w[j]
        x = _NEG
        ok_x = True
        for j in range(t_nodes.shape[0]):
            t = lm_to[t_nodes[j], L]
            if t == LM_NONE:
                ok_x = False
                break
            if np.int64(t) - t_w[j] > x:
                x = np.int64(t) - t_w[j]
        xs = _NEG
        ok_xs = True
        for i in range(s_nodes.shape[0]):
            f = lm_from[s_nodes[i], L]
            if f == LM_NONE:
                ok_xs = False
                break
            if np.int64(f) - s_w[i] > xs:
                xs = np.int64(f) - s_w[i]
        ys = _POS
        for i in range(s_nodes.shape[0]):
            t = lm_to[s_nodes[i], L]
            if t != LM_NONE and s_w[i] + np.int64(t) < ys:
                ys = s_w[i] + np.int64(t)
        c_all[L, 0] = y
        c_all[L, 1] = x
        c_all[L, 2] = xs
        c_all[L, 3] = ys
        v_all[L, 0] = y < _POS
        v_all[L, 1] = ok_x
        v_all[L, 2] = ok_xs
        v_all[L, 3] = ys < _POS
        # bound on d(S, T): min over source seeds of sw_i + pi_t(s_i), and min over targets of pi_s(t_j) + tw_j
        e1 = _POS
        for i in range(s_nodes.shape[0]):
            v = s_nodes[i]
            b = np.int64(0)
            f = lm_from[v, L]
            t = lm_to[v, L]
            if v_all[L, 0] and f != LM_NONE and y - np.int64(f) > b:
                b = y - np.int64(f)
            if ok_x:
                bb = (LM_BIG if t == LM_NONE else np.int64(t)) - x
                if bb > b:
                    b = bb
            if s_w[i] + b < e1:
                e1 = s_w[i] + b
        e2 = _POS
        for j in range(t_nodes.shape[0]):
            v = t_nodes[j]
            b = np.int64(0)
            f = lm_from[v, L]
            t = lm_to[v, L]
            if ok_xs:
                bb = (LM_BIG if f == LM_NONE else np.int64(f)) - xs
                if bb > b:
                    b = bb
            if v_all[L, 3] and t != LM_NONE and ys - np.int64(t) > b:
                b = ys - np.int64(t)
            if t_w[j] + b < e2:
                e2 = t_w[j] + b
        e = max(e1, e2)
        if e >= LM_BIG // 2:
            return -1
        est[L] = e
    nact = 0
    for _ in range(min(cols.shape[0], k_all)):
        best = -1
        for L in range(k_all):
            if est[L] > 0 and (best < 0 or est[L] > est[best]):
                best = L
        if best < 0:
            break
        cols[nact] = best
        for r in range(4):
            consts[nact, r] = c_all[best, r]
            valid[nact, r] = v_all[best, r]
        est[best] = -1
        nact += 1
    return nact


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
        self.active = active

    def _landmarks(self, s_nodes: np.ndarray, s_w: np.ndarray, t_nodes: np.ndarray, t_w: np.ndarray) -> int:
        if self.active <= 0 or self.lm_from.shape[1] == 0:
            return 0
        return int(alt_setup(self.lm_from, self.lm_to, s_nodes, s_w, t_nodes, t_w, self.cols, self.consts, self.valid))
