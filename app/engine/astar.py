"""A* with the great-circle bound: unidirectional, and bidirectional with consistent average potentials.

Bounds. `pi_t(v)` bounds the weight from v to the virtual target point T, `pi_s(v)` the weight from the virtual
source point S to v. The straight-line part is `max(0, floor(scale * gc(v, point) - c))` with `scale` from
`app.engine.geo` (consistent on every arc) and a per-query shift `c = max(0, max_j(scale * gc(seed_j, point) -
seed_weight_j))`: this makes the bound consistent on the virtual seed arcs too (`pi_t(t_j) <= tw_j`), whatever the
rounding of the seed offsets (it subsumes a fixed 1 ds slack). Flooring keeps a consistent bound consistent for
integer weights, so every key is an exact integer (or half-integer) in float64.

Bidirectional A* uses `p_f = (pi_t - pi_s) / 2` forward and `p_r = -p_f` backward (Ikeda et al.). Both reduced
costs `w + p_f(v) - p_f(u)` and `w + p_r(u) - p_r(v)` are the same non-negative number, so the pair is bidirectional
Dijkstra on one reduced graph with sources S and T. Its stopping rule `top_f' + top_r' >= mu'` in reduced terms
(`top_f' = k_f - p_f(S)`, `top_r' = k_r - p_r(T)`, `mu' = mu + p_f(T) - p_f(S)`) simplifies, because
`p_r = -p_f`, to `k_f + k_r >= mu` on the raw keys `k_f = d_f + p_f`, `k_r = d_r + p_r`. The potentials of S and T
never enter; they only need to exist (`pi_t(S) = min_i(sw_i + pi_t(s_i))` and alike are consistent choices).
The two directions are balanced by how far each has advanced from its first key.

`ALTSearch` (app.engine.alt) runs the same kernel with landmark terms max'ed into `pi_t` / `pi_s`; the landmark
constants are derived here (`landmark_setup`) so that one numba call answers a query.
"""

from __future__ import annotations

import math
import time

import numba as nb
import numpy as np

from preprocessing.artifacts import Graph
from preprocessing.heap import heap_pop, heap_push

from .dijkstra import INF, BidirectionalSearchBase, SearchBase, finish_bidirectional, forward_chain, seed_arrays
from .geo import gc_unit_m, node_geo
from .types import SearchResult, Seeds

LM_NONE = np.uint32(0xFFFFFFFF)  # landmark-distance sentinel: unreachable (same value as preprocessing.landmarks)
LM_BIG = np.int64(1) << np.int64(40)  # stands in for an infinite landmark distance where that keeps consistency
_NEG = -(np.int64(1) << np.int64(62))
_POS = np.int64(1) << np.int64(62)
_NO_LM = np.zeros((1, 1), dtype=np.uint32)

# A point array `p` (float64 [6]) is (x, y, z, shift, lon, lat): the caller writes lon/lat (degrees), the kernels
# fill the unit vector and the per-query shift.


@nb.njit(cache=True, nogil=True, inline="always")
def _set_point(p):  # pragma: no cover - numba
    la = math.radians(p[5])
    lo = math.radians(p[4])
    c = math.cos(la)
    p[0] = c * math.cos(lo)
    p[1] = c * math.sin(lo)
    p[2] = math.sin(la)
    p[3] = 0.0


@nb.njit(cache=True, nogil=True, inline="always")
def _gc_bound(v, xyz, scale, p):  # pragma: no cover - numba
    """max(0, floor(scale * gc(v, point) - shift)): the straight-line bound in whole ds."""
    r = scale * gc_unit_m(xyz[v, 0], xyz[v, 1], xyz[v, 2], p[0], p[1], p[2]) - p[3]
    if r <= 0.0:
        return 0.0
    return math.floor(r)


@nb.njit(cache=True, nogil=True)
def prepare_point(nodes, weights, xyz, scale, p):  # pragma: no cover - numba
    """Fill p's unit vector and its shift c = max(0, max_j(scale * gc(seed_j, point) - weight_j))."""
    _set_point(p)
    c = 0.0
    for j in range(nodes.shape[0]):
        v = nodes[j]
        r = scale * gc_unit_m(xyz[v, 0], xyz[v, 1], xyz[v, 2], p[0], p[1], p[2])
        r -= weights[j]
        if r > c:
            c = r
    p[3] = c


@nb.njit(cache=True, nogil=True, inline="always")
def _lm_bound(v, lm_from, lm_to, cols, consts, valid, nact, side):  # pragma: no cover - numba
    """Largest landmark bound at v (side 0: to the target, 1: from the source); -1 when no landmark gives one.

    Target side, per active landmark L: `Y - d(L, v)` (skipped where d(L, v) is unreachable) and `d(v, L) - X`
    (LM_BIG stands in for an unreachable d(v, L)). Source side: `d(L, v) - X'` (LM_BIG likewise) and
    `Y' - d(v, L)` (skipped). See app.engine.alt for the constants and why each choice stays consistent.
    """
    best = -1
    for k in range(nact):
        c = cols[k]
        f = lm_from[v, c]
        t = lm_to[v, c]
        if side == 0:
            if valid[k, 0] and f != LM_NONE:
                b = consts[k, 0] - np.int64(f)
                if b > best:
                    best = b
            if valid[k, 1]:
                b = (LM_BIG if t == LM_NONE else np.int64(t)) - consts[k, 1]
                if b > best:
                    best = b
        else:
            if valid[k, 2]:
                b = (LM_BIG if f == LM_NONE else np.int64(f)) - consts[k, 2]
                if b > best:
                    best = b
            if valid[k, 3] and t != LM_NONE:
                b = consts[k, 3] - np.int64(t)
                if b > best:
                    best = b
    return best


@nb.njit(cache=True, nogil=True, inline="always")
def _bounds(v, xyz, scale, tp, sp, lm_from, lm_to, cols, consts, valid, nact):  # pragma: no cover - numba
    """(pi_t(v), pi_s(v)): straight-line bounds max'ed with the active landmark bounds, whole ds."""
    ht = _gc_bound(v, xyz, scale, tp)
    hs = _gc_bound(v, xyz, scale, sp)
    if nact > 0:
        lt = float(_lm_bound(v, lm_from, lm_to, cols, consts, valid, nact, 0))
        if lt > ht:
            ht = lt
        ls = float(_lm_bound(v, lm_from, lm_to, cols, consts, valid, nact, 1))
        if ls > hs:
            hs = ls
    return ht, hs


@nb.njit(cache=True, nogil=True, inline="always")
def _pf(v, pot, pot_st, q, xyz, scale, tp, sp, lm_from, lm_to, cols, consts, valid, nact):  # pragma: no cover - numba
    """The forward average potential p_f(v) = (pi_t(v) - pi_s(v)) / 2, computed once per node and query."""
    if pot_st[v] == q:
        return pot[v]
    ht, hs = _bounds(v, xyz, scale, tp, sp, lm_from, lm_to, cols, consts, valid, nact)
    p = 0.5 * (ht - hs)
    pot[v] = p
    pot_st[v] = q
    return p


@nb.njit(cache=True, nogil=True)
def landmark_setup(lm_from, lm_to, s_nodes, s_w, t_nodes, t_w, cols, consts, valid):  # pragma: no cover - numba
    """Fill the per-query landmark constants (app.engine.alt docstring) for the best `len(cols)` landmarks.

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


@nb.njit(cache=True, nogil=True)
def bound_table(
    s_nodes, s_w, t_nodes, t_w, xyz, scale, tp, sp, lm_from, lm_to, cols, consts, valid, lm_max, out_t, out_s
):  # pragma: no cover - numba
    """pi_t and pi_s of every node for one query, exactly as the searches compute them (tests, diagnostics)."""
    prepare_point(t_nodes, t_w, xyz, scale, tp)
    prepare_point(s_nodes, s_w, xyz, scale, sp)
    nact = 0
    if lm_max > 0:
        nact = max(landmark_setup(lm_from, lm_to, s_nodes, s_w, t_nodes, t_w, cols, consts, valid), 0)
    for v in range(out_t.shape[0]):
        out_t[v], out_s[v] = _bounds(v, xyz, scale, tp, sp, lm_from, lm_to, cols, consts, valid, nact)


@nb.njit(cache=True, nogil=True)
def bidir_potential_search(
    first_out,
    arc_head,
    arc_tail,
    arc_weight,
    in_first_out,
    in_arc,
    s_nodes,
    s_w,
    t_nodes,
    t_w,
    df,
    pf,
    sf,
    dr,
    pr,
    sr,
    q,
    pot,
    pot_st,
    hkf,
    hnf,
    hkr,
    hnr,
    xyz,
    scale,
    tp,
    sp,
    lm_from,
    lm_to,
    cols,
    consts,
    valid,
    lm_max,
    buf,
    out,
):  # pragma: no cover - numba
    """Bidirectional search with average potentials; stops when k_f + k_r >= mu (module docstring).

    `lm_max > 0` picks that many active landmarks per query (ALT). out as `finish_bidirectional` writes it.
    """
    prepare_point(t_nodes, t_w, xyz, scale, tp)
    prepare_point(s_nodes, s_w, xyz, scale, sp)
    nact = 0
    if lm_max > 0:
        nact = landmark_setup(lm_from, lm_to, s_nodes, s_w, t_nodes, t_w, cols, consts, valid)
        if nact < 0:  # the landmark tables prove that no target seed is reachable
            finish_bidirectional(INF, -1, 0, 0, pf, pr, arc_tail, arc_head, buf, out)
            return
    lab = 2 * q
    done = 2 * q + 1
    mu = INF
    meet = -1
    nf = 0
    for i in range(s_nodes.shape[0]):
        v = s_nodes[i]
        if sf[v] < lab or s_w[i] < df[v]:
            df[v] = s_w[i]
            pf[v] = -1 - i
            sf[v] = lab
            p = _pf(v, pot, pot_st, q, xyz, scale, tp, sp, lm_from, lm_to, cols, consts, valid, nact)
            nf = heap_push(hkf, hnf, nf, s_w[i] + p, v)
    nr = 0
    for j in range(t_nodes.shape[0]):
        v = t_nodes[j]
        if sr[v] < lab or t_w[j] < dr[v]:
            dr[v] = t_w[j]
            pr[v] = -1 - j
            sr[v] = lab
            p = _pf(v, pot, pot_st, q, xyz, scale, tp, sp, lm_from, lm_to, cols, consts, valid, nact)
            nr = heap_push(hkr, hnr, nr, t_w[j] - p, v)
            if sf[v] >= lab and df[v] + dr[v] < mu:
                mu = df[v] + dr[v]
                meet = v
    off_f = hkf[0] if nf > 0 else 0.0
    off_r = hkr[0] if nr > 0 else 0.0
    settled = 0
    relaxed = 0
    while nf > 0 and nr > 0:
        if hkf[0] + hkr[0] >= mu:
            break
        if hkf[0] - off_f <= hkr[0] - off_r:
            _, u, nf = heap_pop(hkf, hnf, nf)
            if sf[u] == done:
                continue
            sf[u] = done
            settled += 1
            du = df[u]
            for a in range(first_out[u], first_out[u + 1]):
                relaxed += 1
                x = arc_head[a]
                nd = du + arc_weight[a]
                sx = sf[x]
                if sx < lab or (sx == lab and nd < df[x]):
                    df[x] = nd
                    pf[x] = a
                    sf[x] = lab
                    p = _pf(x, pot, pot_st, q, xyz, scale, tp, sp, lm_from, lm_to, cols, consts, valid, nact)
                    nf = heap_push(hkf, hnf, nf, nd + p, x)
                    if sr[x] >= lab and nd + dr[x] < mu:
                        mu = nd + dr[x]
                        meet = x
        else:
            _, u, nr = heap_pop(hkr, hnr, nr)
            if sr[u] == done:
                continue
            sr[u] = done
            settled += 1
            du = dr[u]
            for i in range(in_first_out[u], in_first_out[u + 1]):
                relaxed += 1
                a = in_arc[i]
                x = arc_tail[a]
                nd = du + arc_weight[a]
                sx = sr[x]
                if sx < lab or (sx == lab and nd < dr[x]):
                    dr[x] = nd
                    pr[x] = a
                    sr[x] = lab
                    p = _pf(x, pot, pot_st, q, xyz, scale, tp, sp, lm_from, lm_to, cols, consts, valid, nact)
                    nr = heap_push(hkr, hnr, nr, nd - p, x)
                    if sf[x] >= lab and nd + df[x] < mu:
                        mu = nd + df[x]
                        meet = x
    finish_bidirectional(mu, meet, settled, relaxed, pf, pr, arc_tail, arc_head, buf, out)


@nb.njit(cache=True, nogil=True)
def _astar(
    first_out,
    arc_head,
    arc_tail,
    arc_weight,
    s_nodes,
    s_w,
    t_nodes,
    t_w,
    dist,
    pred,
    st,
    tw,
    tw_idx,
    tw_st,
    q,
    pot,
    pot_st,
    xyz,
    scale,
    tp,
    hk,
    hn,
    buf,
    out,
):  # pragma: no cover - numba
    """Unidirectional A* (key d + pi_t) until the smallest key reaches the best target. out as `_dijkstra`'s."""
    prepare_point(t_nodes, t_w, xyz, scale, tp)
    lab = 2 * q
    done = 2 * q + 1
    for j in range(t_nodes.shape[0]):
        v = t_nodes[j]
        if tw_st[v] != q or t_w[j] < tw[v]:
            tw[v] = t_w[j]
            tw_idx[v] = j
            tw_st[v] = q
    size = 0
    for i in range(s_nodes.shape[0]):
        v = s_nodes[i]
        if st[v] < lab or s_w[i] < dist[v]:
            dist[v] = s_w[i]
            pred[v] = -1 - i
            st[v] = lab
            if pot_st[v] != q:
                pot[v] = _gc_bound(v, xyz, scale, tp)
                pot_st[v] = q
            size = heap_push(hk, hn, size, s_w[i] + pot[v], v)
    best = INF
    best_node = -1
    settled = 0
    relaxed = 0
    while size > 0:
        key, u, size = heap_pop(hk, hn, size)
        if st[u] == done:
            continue
        if key >= best:
            break
        st[u] = done
        settled += 1
        du = dist[u]
        if tw_st[u] == q:
            c = du + tw[u]
            if c < best:
                best = c
                best_node = u
        for a in range(first_out[u], first_out[u + 1]):
            relaxed += 1
            x = arc_head[a]
            nd = du + arc_weight[a]
            sx = st[x]
            if sx < lab or (sx == lab and nd < dist[x]):
                dist[x] = nd
                pred[x] = a
                st[x] = lab
                if pot_st[x] != q:
                    pot[x] = _gc_bound(x, xyz, scale, tp)
                    pot_st[x] = q
                size = heap_push(hk, hn, size, nd + pot[x], x)
    out[0] = best
    out[1] = best_node
    out[2] = settled
    out[3] = relaxed
    if best_node >= 0:
        k, s_seed = forward_chain(pred, arc_tail, best_node, buf)
        out[4] = k
        out[5] = s_seed
        out[6] = tw_idx[best_node]


class _PotentialMixin:
    """Per-node potential cache (value + stamp) and the straight-line tables of the graph."""

    def _init_potentials(self, graph: Graph, n: int) -> None:
        self.geo = node_geo(graph)
        self.pot = np.zeros(max(n, 1), dtype=np.float64)
        self.pot_st = np.zeros(max(n, 1), dtype=np.int32)
        self.tp = np.zeros(6, dtype=np.float64)
        self.sp = np.zeros(6, dtype=np.float64)


class AStarSearch(SearchBase, _PotentialMixin):
    """Unidirectional A* towards the target point with the great-circle / measured-top-speed bound."""

    algorithm = "astar"
    directions = 1

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)
        n = max(self.n, 1)
        self.tw = np.zeros(n, dtype=np.int64)
        self.tw_idx = np.zeros(n, dtype=np.int32)
        self.tw_st = np.zeros(n, dtype=np.int32)
        self._init_potentials(graph, n)

    def _reset_stamps(self) -> None:
        super()._reset_stamps()
        self.tw_st.fill(0)
        self.pot_st.fill(0)

    def bounds(self, targets: Seeds) -> np.ndarray:
        """pi_t float64 [n]: this search's bound (whole ds) from every node to the target point. For tests."""
        t_nodes, t_w = seed_arrays(targets)
        self.tp[4], self.tp[5] = targets.lon, targets.lat
        pi_t = np.zeros(self.n, dtype=np.float64)
        pi_s = np.zeros(self.n, dtype=np.float64)
        sp = self.tp.copy()
        g = self.geo
        none = (np.zeros(1, np.int32), np.zeros((1, 4), np.int64), np.zeros((1, 4), np.uint8))
        bound_table(
            t_nodes[:0], t_w[:0], t_nodes, t_w, g.xyz, g.scale, self.tp, sp, _NO_LM, _NO_LM, *none, 0, pi_t, pi_s
        )
        return pi_t

    def run(self, sources: Seeds, targets: Seeds) -> SearchResult:
        """Best path from any source seed to any target seed; unreachable gives weight INF_WEIGHT and no arcs."""
        t0 = time.perf_counter_ns()
        s_nodes, s_w = seed_arrays(sources)
        t_nodes, t_w = seed_arrays(targets)
        if s_nodes.size == 0 or t_nodes.size == 0:
            return self._unreachable(t0)
        self._ensure_heap(s_nodes.size)
        q = self._next_query()
        hk, hn = self.heaps[0]
        tp = self.tp
        tp[4] = targets.lon
        tp[5] = targets.lat
        g = self.geo
        _astar(
            self.first_out,
            self.arc_head,
            self.arc_tail,
            self.arc_weight,
            s_nodes,
            s_w,
            t_nodes,
            t_w,
            self.dist[0],
            self.pred[0],
            self.stamp[0],
            self.tw,
            self.tw_idx,
            self.tw_st,
            q,
            self.pot,
            self.pot_st,
            g.xyz,
            g.scale,
            tp,
            hk,
            hn,
            self.path_buf,
            self.out,
        )
        return self._result(t0)


class BidirectionalAStarSearch(BidirectionalSearchBase, _PotentialMixin):
    """Bidirectional A* with the great-circle bound as consistent average potentials (module docstring)."""

    algorithm = "bidirectional-astar"
    lm_max = 0  # active landmarks per query (ALTSearch sets its own)

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)
        self._init_potentials(graph, self.n)
        self.lm_from = _NO_LM
        self.lm_to = _NO_LM
        self.cols = np.zeros(1, dtype=np.int32)
        self.consts = np.zeros((1, 4), dtype=np.int64)
        self.valid = np.zeros((1, 4), dtype=np.uint8)

    def _reset_stamps(self) -> None:
        super()._reset_stamps()
        self.pot_st.fill(0)

    def bounds(self, sources: Seeds, targets: Seeds) -> tuple[np.ndarray, np.ndarray]:
        """(pi_t, pi_s) float64 [n]: this search's bounds to the targets and from the sources for every node.

        Both are whole deciseconds and >= 0 (the straight-line part is). For tests and diagnostics.
        """
        s_nodes, s_w = seed_arrays(sources)
        t_nodes, t_w = seed_arrays(targets)
        self.tp[4], self.tp[5] = targets.lon, targets.lat
        self.sp[4], self.sp[5] = sources.lon, sources.lat
        pi_t = np.zeros(self.n, dtype=np.float64)
        pi_s = np.zeros(self.n, dtype=np.float64)
        g = self.geo
        bound_table(
            s_nodes,
            s_w,
            t_nodes,
            t_w,
            g.xyz,
            g.scale,
            self.tp,
            self.sp,
            self.lm_from,
            self.lm_to,
            self.cols,
            self.consts,
            self.valid,
            self.lm_max,
            pi_t,
            pi_s,
        )
        return pi_t, pi_s

    def run(self, sources: Seeds, targets: Seeds) -> SearchResult:
        """Best path from any source seed to any target seed; unreachable gives weight INF_WEIGHT and no arcs."""
        t0 = time.perf_counter_ns()
        prep = self._prepare(sources, targets)
        if prep is None:
            return self._unreachable(t0)
        s_nodes, s_w, t_nodes, t_w = prep
        q = self._next_query()
        tp, sp = self.tp, self.sp
        tp[4] = targets.lon
        tp[5] = targets.lat
        sp[4] = sources.lon
        sp[5] = sources.lat
        (hkf, hnf), (hkr, hnr) = self.heaps
        g = self.geo
        bidir_potential_search(
            self.first_out,
            self.arc_head,
            self.arc_tail,
            self.arc_weight,
            self.in_first_out,
            self.in_arc,
            s_nodes,
            s_w,
            t_nodes,
            t_w,
            self.dist[0],
            self.pred[0],
            self.stamp[0],
            self.dist[1],
            self.pred[1],
            self.stamp[1],
            q,
            self.pot,
            self.pot_st,
            hkf,
            hnf,
            hkr,
            hnr,
            g.xyz,
            g.scale,
            tp,
            sp,
            self.lm_from,
            self.lm_to,
            self.cols,
            self.consts,
            self.valid,
            self.lm_max,
            self.path_buf,
            self.out,
        )
        return self._result(t0)
