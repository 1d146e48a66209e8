"""The one search core: a single numba kernel (`search`) that every non-CH search runs on.

The loop picks a direction, pops its next node from the binary heap (`floor.kernels.heap`, lazy deletion: a node
is pushed again when its label improves, stale entries are skipped on pop), settles it and relaxes its arcs, forward
over the out-arcs or backward over the in-arcs. What distinguishes the searches are parameters, never a copy of the
loop:

- the **mode**: `MODE_UNI` one direction to the target seeds, `MODE_BI` both directions meeting in the middle,
  `MODE_ALL` one direction to given nodes, to exhaustion or to a cutoff weight (the table fallback, isochrones),
  `MODE_BOUNDS` no search: the bounds of every node (tests, diagnostics);
- the **potential** (`PK_NONE` Dijkstra; `PK_TARGET` A*: the bound to the target, times epsilon for weighted A*;
  `PK_FORWARD`/`PK_BACKWARD` bidirectional A* with the consistent average potential p_f = (pi_t - pi_s) / 2 and
  p_r = -p_f; `PK_SOURCE` a backward search keyed on the bound from the sources): great-circle distance / measured
  top speed, max'ed with landmark bounds for ALT;
- an **arc filter**: arcs whose flags meet `excl` (excluded road classes) are skipped, and so are arcs stamped with the
  query's number in `forbid` (per-request forbidden arcs: areas to avoid). Landmark and great-circle bounds stay
  lower bounds on a graph with arcs removed, so every potential stays admissible and consistent;
- a **trace** buffer for the settled nodes, in settle order.

Stopping rules: unidirectional, once the smallest key is not below mu (the best path found); bidirectional, once
k_f + k_r >= mu on the raw keys (for Dijkstra the two smallest labels; for average potentials the same rule, derived
in docs/DESIGN.md); with epsilon > 1, bidirectional searches also stop once mu <= epsilon * (k_f + k_r), the proven
lower bound. The potential is computed in an inner function numba inlines: arrays read from the kernel's own scope,
never passed per relaxed arc (each array argument costs numba two reference-count updates, which made an earlier
cut of this core twice as slow as the kernels it replaced).

States. One scheme for every per-node array: in query q (`base = 3q`) a node is labelled when `st[r, v] == base`,
settled when `st[r, v] == base + 1`, unreached when `st[r, v] < base` (row r = 0 forward, 1 backward); a potential is
valid when `pot_st[v] == q`. Labels are int64 weights (ds); predecessors are arc ids, or `-1 - seed` at a seed. Ties
break on the node id (heap order).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from app.engine.geo import gc_unit_m
from floor.format.units import INF_WEIGHT, LM_NONE
from floor.kernels.heap import heap_pop, heap_push
from floor.kernels.jit import F64, I32, I64, NONE, U8, U32, arr, kernel

LM_BIG = np.int64(1) << np.int64(40)  # stands in for an infinite landmark distance where that keeps consistency
_NEG = -(np.int64(1) << np.int64(62))
_POS = np.int64(1) << np.int64(62)

PK_NONE = 0  # Dijkstra
PK_TARGET = 1  # A*: key = d + eps * pi_t
PK_FORWARD = 2  # bidirectional A*, forward: key = d + p_f
PK_BACKWARD = 3  # bidirectional A*, backward: key = d - p_f (MODE_ALL: search backward)
PK_SOURCE = 4  # MODE_ALL backward, key = d + pi_s: the bound from the potential's seeds `t_nodes` to the node

MODE_UNI = 0  # one direction to the target seeds
MODE_BI = 1  # both directions, meeting in the middle
MODE_ALL = 2  # one direction until given nodes are settled, to exhaustion, or up to a cutoff
MODE_BOUNDS = 3  # no search: pi_t, pi_s of every node into the label rows


class GraphArrays(NamedTuple):
    """The graph as the core reads it (read-only views, nothing copied)."""

    first_out: np.ndarray  # int32 [n+1]
    arc_head: np.ndarray  # int32 [m]
    in_first_out: np.ndarray  # int32 [n+1]
    in_arc: np.ndarray  # int32 [m]
    arc_tail: np.ndarray  # int32 [m]
    arc_weight: np.ndarray  # int32 [m] ds
    arc_flags: np.ndarray  # uint8 [m]
    xyz: np.ndarray  # float64 [n, 3] node unit vectors (app.engine.geo)
    lm_from: np.ndarray  # uint32 [n, k] (a [1, 1] table when the graph has none)
    lm_to: np.ndarray


class Labels(NamedTuple):
    """Both directions' labels and heaps (row 0 forward, row 1 backward), allocated once per search object.

    Rows of 2-D arrays, not one tuple per direction: the kernel picks a direction per settled node, and rebinding
    array variables costs numba a reference-count update per array, which a row index does not.
    """

    dist: np.ndarray  # int64 [2, n]
    pred: np.ndarray  # int32 [2, n]
    st: np.ndarray  # int32 [2, n]
    fkeys: np.ndarray  # float64 [cap] forward heap
    fnodes: np.ndarray  # int32 [cap]
    bkeys: np.ndarray  # float64 [cap] backward heap
    bnodes: np.ndarray  # int32 [cap]


class Potential(NamedTuple):
    """A query's potential: the cached values and the parameters that define them."""

    pot: np.ndarray  # float64 [n] cached value per node (eps * pi_t for PK_TARGET, p_f for bidirectional)
    pot_st: np.ndarray  # int32 [n] == q where `pot` is valid
    tp: np.ndarray  # float64 [6] target point: unit vector, shift, lon, lat (see `prepare_point`)
    sp: np.ndarray  # float64 [6] source point
    par: np.ndarray  # float64 [4]: scale (ds per great-circle metre), epsilon, -, -
    cols: np.ndarray  # int32 [k] active landmark columns
    consts: np.ndarray  # int64 [k, 4] per-query landmark constants (docs/DESIGN.md, Landmarks)
    valid: np.ndarray  # uint8 [k, 4]


_RO_I32 = arr(I32, readonly=True)
_RO_U8 = arr(U8, readonly=True)
_RO_XYZ = arr(F64, 2, readonly=True)
_RO_LM = arr(U32, 2, readonly=True)
_VI32, _VI64, _VF64 = arr(I32), arr(I64), arr(F64)


class Ends(NamedTuple):
    """A search's two ends: the source seeds (search nodes and their start weights) and the target seeds."""

    s_nodes: np.ndarray
    s_w: np.ndarray
    t_nodes: np.ndarray
    t_w: np.ndarray


def numba_types() -> tuple[object, object, object, object]:
    """The numba types of (GraphArrays, Labels, Potential, Ends) as the kernel takes them."""
    from numba import types as nt

    graph = nt.NamedTuple(
        [_RO_I32, _RO_I32, _RO_I32, _RO_I32, _RO_I32, _RO_I32, _RO_U8, _RO_XYZ, _RO_LM, _RO_LM], GraphArrays
    )
    labels = nt.NamedTuple([arr(I64, 2), arr(I32, 2), arr(I32, 2), _VF64, _VI32, _VF64, _VI32], Labels)
    potential = nt.NamedTuple([_VF64, _VI32, _VF64, _VF64, _VF64, _VI32, arr(I64, 2), arr(U8, 2)], Potential)
    ends = nt.NamedTuple([_VI32, _VI64, _VI32, _VI64], Ends)
    return graph, labels, potential, ends


_G, _L, _P, _E = numba_types()


@kernel(NONE(_VI32, _VI64, _RO_XYZ, F64, _VF64), nrt=False)
def prepare_point(nodes, weights, xyz, scale, p):  # pragma: no cover - numba
    """Fill a point array `p` = (x, y, z, shift, lon, lat) from its lon/lat (degrees): the unit vector, and the shift
    c = max(0, max_j(scale * gc(seed_j, point) - weight_j)).

    The shift makes the straight-line bound consistent on the virtual seed arcs too (`pi_t(t_j) <= tw_j`), whatever
    the rounding of the seed offsets.
    """
    la = math.radians(p[5])
    lo = math.radians(p[4])
    c = math.cos(la)
    p[0] = c * math.cos(lo)
    p[1] = c * math.sin(lo)
    p[2] = math.sin(la)
    shift = 0.0
    for j in range(nodes.shape[0]):
        v = nodes[j]
        r = scale * gc_unit_m(xyz[v, 0], xyz[v, 1], xyz[v, 2], p[0], p[1], p[2]) - weights[j]
        if r > shift:
            shift = r
    p[3] = shift


@kernel(I64(_RO_LM, _RO_LM, _VI32, _VI64, _VI32, _VI64, _VI32, arr(I64, 2), arr(U8, 2)))
def landmark_setup(lm_from, lm_to, s_nodes, s_w, t_nodes, t_w, cols, consts, valid):  # pragma: no cover - numba
    """Fill the per-query landmark constants (docs/DESIGN.md, Landmarks) for the best `len(cols)` landmarks.

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


# out (int64 [8]): 0 mu (best weight), 1 meeting node, 2 settled, 3 relaxed, 4 path arcs, 5 source seed,
# 6 target seed, 7 trace entries


SEARCH_SIGNATURE = NONE(  # type: ignore[call-overload]
    _G, _L, _E, I64, I64, I64, _P, I64, U8, _VI32, I64, _VI32, _VI32, _VI64, I64
)


@kernel(SEARCH_SIGNATURE)
def search(g, lab, ends, q, mode, pk, p, lm_max, excl, forbid, fq, trace, buf, out, cutoff):  # pragma: no cover - numba
    """Every core search: one loop that settles the next node of the direction it picks and relaxes its arcs.

    - `MODE_UNI`: forward from the sources with potential `pk` (PK_NONE or PK_TARGET); the backward row holds only
      the target seeds, labelled at their weights, so labelling one offers the meeting candidate mu; it stops once
      the smallest key is not below mu.
    - `MODE_BI`: forward with `pk` (PK_NONE or PK_FORWARD), backward from the targets with the opposite potential;
      it stops once k_f + k_r >= mu, balancing the directions by how far each advanced from its first key.
    - `MODE_ALL`: from the sources (forward, or backward over in-arcs when `pk` is PK_BACKWARD: "who reaches them")
      without potential, until every node of `t_nodes` is settled (none given: to exhaustion), never settling a node
      beyond `cutoff` ds; labels stay in row 0 (target weights are not used). With `pk` PK_TARGET (forward) or
      PK_SOURCE (backward), `t_nodes`/`t_w` are instead the far end the consistent potential bounds (towards them,
      or from them): nodes settle in key order with exact labels, and every node whose label plus bound is within
      `cutoff` is settled (an ellipse instead of a disc: alternative routes).
    - `MODE_BOUNDS`: pi_t and pi_s of every node, as the searches compute them, into `dist[0]` and `dist[1]`.

    Arcs with `arc_flags & excl` or `forbid[arc] == fq` (fq > 0) are skipped. With `p.par[1]` (epsilon) > 1, A*
    inflates its bound, and bidirectional searches stop once mu <= epsilon * (k_f + k_r): either answer is within
    epsilon of the optimum. `lm_max` > 0 picks that many active landmarks per query (ALT). `trace` (int32, may be
    empty) records settled nodes as `2 * node + direction`. Writes `out` and, point to point, the arcs into `buf`.
    `ends` holds both ends' seeds (`Ends`).
    """
    s_nodes, s_w, t_nodes, t_w = ends
    base = 3 * q
    done = base + 1
    for k in range(8):
        out[k] = 0
    out[0] = INF_WEIGHT
    out[1] = -1
    xyz, lmf, lmt, pv, ps, tp, sp, par, cols, consts, valid = (
        g.xyz, g.lm_from, g.lm_to, p.pot, p.pot_st, p.tp, p.sp, p.par, p.cols, p.consts, p.valid
    )  # fmt: skip
    first_out, arc_head, in_first_out, in_arc, arc_tail, weight, flags = (
        g.first_out, g.arc_head, g.in_first_out, g.in_arc, g.arc_tail, g.arc_weight, g.arc_flags,
    )  # fmt: skip
    dist, pred, st, fk, fn, bk, bn = lab
    scale = par[0]
    eps = par[1]
    nact = 0
    all_fwd = True
    bounded = False  # MODE_ALL keyed on a bound towards / from t_nodes
    if mode == MODE_ALL:
        all_fwd = pk != PK_BACKWARD and pk != PK_SOURCE
        bounded = pk == PK_TARGET or pk == PK_SOURCE
        if not bounded:
            pk = PK_NONE
    if pk == PK_SOURCE:  # the potential's seeds are t_nodes, the bound is from them: their side is the source side
        prepare_point(t_nodes, t_w, xyz, scale, sp)
        if lm_max > 0:
            nact = landmark_setup(lmf, lmt, t_nodes, t_w, s_nodes, s_w, cols, consts, valid)
            if nact < 0:
                return
    elif pk != PK_NONE or mode == MODE_BOUNDS:
        prepare_point(t_nodes, t_w, xyz, scale, tp)
        prepare_point(s_nodes, s_w, xyz, scale, sp)
        if lm_max > 0:
            nact = landmark_setup(lmf, lmt, s_nodes, s_w, t_nodes, t_w, cols, consts, valid)
            if nact < 0:  # the landmark tables prove that no target seed is reachable
                if mode != MODE_BOUNDS:
                    return
                nact = 0

    def bounds_of(v, need_s):  # (pi_t(v), pi_s(v)) in whole ds; pi_s only when asked
        ht = scale * gc_unit_m(xyz[v, 0], xyz[v, 1], xyz[v, 2], tp[0], tp[1], tp[2]) - tp[3]
        ht = math.floor(ht) if ht > 0.0 else 0.0
        hs = 0.0
        if need_s:
            hs = scale * gc_unit_m(xyz[v, 0], xyz[v, 1], xyz[v, 2], sp[0], sp[1], sp[2]) - sp[3]
            hs = math.floor(hs) if hs > 0.0 else 0.0
        # landmark terms (docs/DESIGN.md, Landmarks): target side Y - d(L, v) and d(v, L) - X, source side d(L, v) - X'
        # and Y' - d(v, L); an unreachable d(L, v) skips a "Y - d" term, LM_BIG stands in for it in a "d - X" term
        for k in range(nact):
            c = cols[k]
            f = lmf[v, c]
            t = lmt[v, c]
            if valid[k, 0] and f != LM_NONE:
                b = float(consts[k, 0] - np.int64(f))
                if b > ht:
                    ht = b
            if valid[k, 1]:
                b = float((LM_BIG if t == LM_NONE else np.int64(t)) - consts[k, 1])
                if b > ht:
                    ht = b
            if need_s:
                if valid[k, 2]:
                    b = float((LM_BIG if f == LM_NONE else np.int64(f)) - consts[k, 2])
                    if b > hs:
                        hs = b
                if valid[k, 3] and t != LM_NONE:
                    b = float(consts[k, 3] - np.int64(t))
                    if b > hs:
                        hs = b
        return ht, hs

    def pot_of(v, kind):  # the key offset of v, computed once per node and query
        if kind == PK_NONE:
            return 0.0
        if ps[v] != q:
            ht, hs = bounds_of(v, kind != PK_TARGET)  # one call site: numba inlines it once per pot_of use
            if kind == PK_TARGET:
                pv[v] = eps * ht
            elif kind == PK_SOURCE:
                pv[v] = hs
            else:
                pv[v] = 0.5 * (ht - hs)
            ps[v] = q
        return -pv[v] if kind == PK_BACKWARD else pv[v]

    if mode == MODE_BOUNDS:
        for v in range(dist.shape[1]):
            ht, hs = bounds_of(v, True)
            dist[0, v] = np.int64(ht)
            dist[1, v] = np.int64(hs)
        return

    pk_b = PK_BACKWARD if pk == PK_FORWARD else PK_NONE
    mu = INF_WEIGHT
    meet = -1
    nf = 0
    for i in range(s_nodes.shape[0]):  # seeds: the cheapest per node, the first on ties
        v = s_nodes[i]
        if st[0, v] < base or s_w[i] < dist[0, v]:
            dist[0, v] = s_w[i]
            pred[0, v] = -1 - i
            st[0, v] = base
            nf = heap_push(fk, fn, nf, s_w[i] + pot_of(v, pk), v)
    nb = 0
    remaining = 0
    if mode == MODE_ALL and not bounded:
        for j in range(t_nodes.shape[0]):  # the nodes to settle, marked in the unused backward row
            v = t_nodes[j]
            if st[1, v] != base:
                st[1, v] = base
                remaining += 1
    else:
        for j in range(t_nodes.shape[0]):
            v = t_nodes[j]
            if st[1, v] < base or t_w[j] < dist[1, v]:
                dist[1, v] = t_w[j]
                pred[1, v] = -1 - j
                st[1, v] = base
                nb = heap_push(bk, bn, nb, t_w[j] + pot_of(v, pk_b), v)
        for j in range(t_nodes.shape[0]):  # a node both a source and a target seed meets at once
            v = t_nodes[j]
            if st[0, v] == base and dist[0, v] + dist[1, v] < mu:
                mu = dist[0, v] + dist[1, v]
                meet = v
    off_f = fk[0] if nf > 0 else 0.0
    off_r = bk[0] if nb > 0 else 0.0
    settled = 0
    relaxed = 0
    ntrace = 0
    tcap = trace.shape[0]
    while True:
        # the stopping rules, and the direction to advance
        if mode == MODE_BI:
            if nf == 0 or nb == 0:
                break
            lower = fk[0] + bk[0]
            if lower >= mu or (eps > 1.0 and mu <= eps * lower):
                break
            r = 0 if fk[0] - off_f <= bk[0] - off_r else 1
        elif mode == MODE_UNI:
            if nf == 0 or fk[0] >= mu:
                break
            r = 0
        else:
            if nf == 0 or (remaining == 0 and t_nodes.shape[0] > 0 and not bounded) or fk[0] > cutoff:
                break
            r = 0
        o = 1 - r
        fwd = all_fwd if r == 0 else False
        kind = pk if r == 0 else pk_b
        # settle the next node of that direction ...
        if r == 0:
            _, u, nf = heap_pop(fk, fn, nf)
        else:
            _, u, nb = heap_pop(bk, bn, nb)
        if st[r, u] == done:
            continue
        st[r, u] = done
        settled += 1
        if ntrace < tcap:
            trace[ntrace] = 2 * u + r
            ntrace += 1
        if mode == MODE_ALL and not bounded and st[1, u] == base:
            remaining -= 1
        du = dist[r, u]
        if fwd:
            lo = first_out[u]
            hi = first_out[u + 1]
        else:
            lo = in_first_out[u]
            hi = in_first_out[u + 1]
        relaxed += hi - lo
        for i in range(lo, hi):  # ... and relax its arcs
            if fwd:
                a = i
                x = arc_head[a]
            else:
                a = in_arc[i]
                x = arc_tail[a]
            if excl != 0 and (flags[a] & excl) != 0:
                continue
            if fq > 0 and forbid[a] == fq:
                continue
            nd = du + weight[a]
            sx = st[r, x]
            if sx < base or (sx == base and nd < dist[r, x]):
                dist[r, x] = nd
                pred[r, x] = a
                st[r, x] = base
                key = nd + pot_of(x, kind)
                if r == 0:
                    nf = heap_push(fk, fn, nf, key, x)
                else:
                    nb = heap_push(bk, bn, nb, key, x)
                if mode != MODE_ALL and st[o, x] >= base and nd + dist[o, x] < mu:
                    mu = nd + dist[o, x]
                    meet = x
    out[0] = mu
    out[1] = meet
    out[2] = settled
    out[3] = relaxed
    out[7] = ntrace
    if mode != MODE_ALL and meet >= 0 and mu < INF_WEIGHT:
        k = 0
        v = meet
        while pred[0, v] >= 0:
            a = pred[0, v]
            buf[k] = a
            k += 1
            v = arc_tail[a]
        out[5] = -1 - pred[0, v]
        for i in range(k // 2):
            buf[i], buf[k - 1 - i] = buf[k - 1 - i], buf[i]
        v = meet
        while pred[1, v] >= 0:
            a = pred[1, v]
            buf[k] = a
            k += 1
            v = arc_head[a]
        out[6] = -1 - pred[1, v]
        out[4] = k


@kernel(NONE(arr(I32, 2), _RO_I32, _RO_I32, _VI32, _VI64, _VI64), nrt=False)
def path_dists(pred, arc_tail, arc_dist, nodes, seed_dists, out):  # pragma: no cover - numba
    """out[j] = dm along the forward predecessor chain to `nodes[j]`, plus the distance of the seed it starts at."""
    for j in range(nodes.shape[0]):
        v = nodes[j]
        d = np.int64(0)
        while pred[0, v] >= 0:
            a = pred[0, v]
            d += arc_dist[a]
            v = arc_tail[a]
        out[j] = d + seed_dists[-1 - pred[0, v]]
