"""Time-dependent searches (departure time, issue 44): the travel-time function, TD-A* with CH potentials, and the
one-to-many tree of tables and isochrones.

Times are integer deciseconds of *week time* (`floor.format.units.WEEK_DS`, Monday 00:00 local time of the graph).
A search node's label is the time it reaches the end of its road arc. Search arc e (u -> v) taken at label tau of u
reaches v at `tau' + ttf(v, tau')`, `tau' = tau + turn[e]` (turn durations are static), `ttf` the piecewise-linear
travel-time function of v's road arc (`ttf`, the one formula every search here and the oracle
`app.engine.search.td_reference` call; docs/DESIGN.md, "Graph directory arrays", states it). FIFO (arrival never
decreases with departure) makes label-setting exact, as in Dijkstra's algorithm.

**Potentials.** TD-A* keys a node by `label + h(v)`, h(v) the exact distance from v to the target set on the
*lower-bound metric* (search arc e weighs `turn[e] + lb(head)`, `lb` the arc's static duration times its smallest
factor, floored), computed with CH-potentials (Strasser and Zeitz 2021) on the CCH customized on that metric: one
backward upward search from the target seeds to exhaustion gives b(r); then `h(r) = min(b(r), min over upward arcs
(r, w) of up(r, w) + h(w))`, evaluated lazily and memoized per query. It is the exact lower-bound distance (every
shortest path of a customized CCH has an up-down form), so `h(u) <= lb(e) + h(v) <= cost_e(tau) + h(v)` for every
arc and departure: consistent, and with h = 0 on the virtual target, admissible. A node with h = INF reaches no
target and is never queued.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from floor.format.units import INF_WEIGHT, SLOT_DS, SLOTS, TD_ONE, WEEK_DS
from floor.kernels.heap import heap_pop, heap_push
from floor.kernels.jit import kernel

_HALF_SLOT = SLOT_DS // 2
_DEN = SLOT_DS * TD_ONE
_ROUND = SLOT_DS * (TD_ONE // 2)


class TDArrays(NamedTuple):
    """What a time-dependent search reads of the search graph (edge-based: a node is a road arc, an arc a turn)."""

    first_out: np.ndarray  # int32 [N+1]
    arc_head: np.ndarray  # int32 [T]
    arc_tail: np.ndarray  # int32 [T]
    arc_turn: np.ndarray  # int32 [T] the turn's travel time (ds), static
    arc_flags: np.ndarray  # uint8 [T] the head road arc's flags (exclude)
    arc_dist: np.ndarray  # int32 [T] dm of the head road arc
    node_dur: np.ndarray  # int32 [N] static travel time (ds) of the node's road arc; -1: closed
    node_row: np.ndarray  # int32 [N] its row of `factor`, -1: static
    factor: np.ndarray  # int32 [P, SLOTS] travel-time factors (1/TD_ONE) at the slots' midpoints
    row_min: np.ndarray  # int64 [P] each row's smallest factor (the lower bound)


class TDHierarchy(NamedTuple):
    """The CCH customized on the lower-bound metric, in the `ch_*` layout (`app.engine.search.cch.customize`)."""

    rank: np.ndarray  # int32 [N]
    up_first: np.ndarray  # int32 [N+1] by rank
    up_arcs: np.ndarray  # int32 [U, 4] head rank, weight, ...
    down_first: np.ndarray  # int32 [N+1] by head rank
    down_arcs: np.ndarray  # int32 [D, 4] tail rank, weight, ...


class TDState(NamedTuple):
    """Per-thread search arrays (allocated once; stamps reset them between queries)."""

    lab: np.ndarray  # int64 [N] week time at the end of the node's road arc
    dst: np.ndarray  # int64 [N] dm along the tree
    pred: np.ndarray  # int32 [N] search arc, or -1 - source seed
    st: np.ndarray  # int32 [N] 2q labelled, 2q + 1 settled
    hk: np.ndarray  # int64 heap keys
    hn: np.ndarray  # int32 heap nodes
    tmark: np.ndarray  # int32 [N] == q: a target seed node
    tidx: np.ndarray  # int32 [N] its first target seed entry
    pval: np.ndarray  # int64 [N] potential by rank (memo)
    pst: np.ndarray  # int32 [N] == q: pval valid
    bval: np.ndarray  # int64 [N] backward upward labels by rank
    bst: np.ndarray  # int32 [N] 2q labelled, 2q + 1 settled
    bk: np.ndarray  # int64 backward heap keys
    bn: np.ndarray  # int32 backward heap nodes
    stack: np.ndarray  # int32 the potential's explicit stack
    buf: np.ndarray  # int32 [N+1] a path's search arcs
    out: np.ndarray  # int64 [8] results


def new_state(n: int, arcs: int, up_arcs: int) -> TDState:
    """Search arrays for a graph of `n` search nodes and `arcs` search arcs (heaps of arcs + n entries)."""
    n1 = max(n, 1)
    cap = arcs + n1 + 64
    return TDState(
        np.zeros(n1, np.int64), np.zeros(n1, np.int64), np.zeros(n1, np.int32), np.zeros(n1, np.int32),
        np.zeros(cap, np.int64), np.zeros(cap, np.int32), np.zeros(n1, np.int32), np.zeros(n1, np.int32),
        np.zeros(n1, np.int64), np.zeros(n1, np.int32), np.zeros(n1, np.int64), np.zeros(n1, np.int32),
        np.zeros(up_arcs + n1 + 64, np.int64), np.zeros(up_arcs + n1 + 64, np.int32),
        np.zeros(up_arcs + n1 + 64, np.int32), np.zeros(n1 + 1, np.int32), np.zeros(8, np.int64),
    )  # fmt: skip


@kernel
def ttf(d, row, factor, tau):  # pragma: no cover - numba
    """Travel time (ds) of an arc (or a part of one) of static duration `d` ds timed by `factor` row `row` (-1:
    static) entered at week time `tau`: round(d * F(tau)), F linear between the slots' midpoints, wrapping around the
    week (int64 arithmetic, exactly the format's formula, docs/DESIGN.md)."""
    if row < 0 or d <= 0:
        return np.int64(d)
    t = np.int64(tau) % WEEK_DS
    s = t - _HALF_SLOT
    if s < 0:
        s += WEEK_DS
    k = s // SLOT_DS
    r = s - k * SLOT_DS
    k1 = k + 1
    if k1 == SLOTS:
        k1 = 0
    num = np.int64(d) * (np.int64(factor[row, k]) * (SLOT_DS - r) + np.int64(factor[row, k1]) * r) + _ROUND
    return num // _DEN


@kernel(nrt=False)
def qpush(heap, size, item):  # pragma: no cover - numba
    """Insert `item` into a 4-ary min-heap of int64 items `key << 32 | node` (key >= 0 below 2^31, node >= 0):
    one comparison orders (key, node) as `floor.kernels.heap` does, so searches pop in the same order, faster (one
    array, half the levels; 0.7x the table's time on Porto). Returns the new size."""
    i = size
    while i > 0:
        parent = (i - 1) >> 2
        p = heap[parent]
        if item < p:
            heap[i] = p
            i = parent
        else:
            break
    heap[i] = item
    return size + 1


@kernel(nrt=False)
def qpop(heap, size):  # pragma: no cover - numba
    """Remove the smallest item of `qpush`'s heap (the caller checks size > 0): (item, new size)."""
    top = heap[0]
    size -= 1
    if size > 0:
        item = heap[size]
        i = 0
        while True:
            c = 4 * i + 1
            if c >= size:
                break
            m = c
            mv = heap[c]
            end = min(c + 4, size)
            for k in range(c + 1, end):
                x = heap[k]
                if x < mv:
                    mv = x
                    m = k
            if mv < item:
                heap[i] = mv
                i = m
            else:
                break
        heap[i] = item
    return top, size


@kernel
def lower_bound(d, row, row_min):  # pragma: no cover - numba
    """The least travel time of an arc (or part) of static duration `d` over the whole week: floor(d * min F)."""
    if row < 0 or d <= 0:
        return np.int64(d)
    return (np.int64(d) * row_min[row]) // TD_ONE


@kernel
def upward_labels(first, arcs, ranks, cost, state, q):  # pragma: no cover - numba
    """One side's upward search on the lower-bound hierarchy (`first` / `arcs`: the downward arcs reversed for the
    target side, the upward arcs for the source side) from the seed ranks at their costs, to exhaustion: the labels
    in `state.bval`, `state.bst` = 2q + 1 where settled for query q."""
    bval, bst, bk, bn = state.bval, state.bst, state.bk, state.bn
    lab = 2 * q
    size = 0
    for j in range(ranks.shape[0]):
        r = ranks[j]
        c = cost[j]
        if bst[r] < lab or c < bval[r]:
            bval[r] = c
            bst[r] = lab
            size = heap_push(bk, bn, size, c, r)
    while size > 0:
        key, r, size = heap_pop(bk, bn, size)
        if bst[r] == lab + 1 or key > bval[r]:
            continue
        bst[r] = lab + 1
        for k in range(first[r], first[r + 1]):
            x = arcs[k, 0]
            c = key + arcs[k, 1]
            if bst[x] < lab or (bst[x] == lab and c < bval[x]):
                bval[x] = c
                bst[x] = lab
                size = heap_push(bk, bn, size, c, x)


@kernel
def _backward_upward(h, t_ranks, t_cost, state, q):  # pragma: no cover - numba
    """The lower-bound hierarchy's backward upward search from the target seeds, to exhaustion (b labels)."""
    upward_labels(h.down_first, h.down_arcs, t_ranks, t_cost, state, q)


@kernel
def memo_distance(first, arcs, r0, state, q):  # pragma: no cover - numba
    """The exact lower-bound distance of rank r0 over one side of a hierarchy (`first` / `arcs`: the upward arcs
    towards a target set, the downward arcs from a source set), memoized per query: `d(r) = min(b(r), min over arcs
    (r, w) of w + d(w))`, b the other side's search labels (`state.bval` where `state.bst` marks query q);
    INF_WEIGHT when none is reachable. Iterative: every neighbour is computed before its node."""
    pval, pst, bval, bst, stack = state.pval, state.pst, state.bval, state.bst, state.stack
    if pst[r0] == q:
        return pval[r0]
    stack[0] = r0
    top = 1
    while top > 0:
        r = stack[top - 1]
        if pst[r] == q:
            top -= 1
            continue
        pending = False
        for k in range(first[r], first[r + 1]):
            w = arcs[k, 0]
            if pst[w] != q:
                stack[top] = w
                top += 1
                pending = True
        if pending:
            continue
        top -= 1
        best = bval[r] if bst[r] >= 2 * q else INF_WEIGHT
        for k in range(first[r], first[r + 1]):
            c = pval[arcs[k, 0]] + arcs[k, 1]
            if c < best:
                best = c
        pval[r] = best
        pst[r] = q
    return pval[r0]


@kernel
def potential(h, r0, state, q):  # pragma: no cover - numba
    """h(r0): the exact lower-bound distance from rank r0 to the target set (module docstring), memoized per query;
    INF_WEIGHT when none is reachable."""
    return memo_distance(h.up_first, h.up_arcs, r0, state, q)


@kernel
def td_route(g, h, use_pot, excl, sources, tau0, targets, state, q):  # pragma: no cover - numba
    """TD-A* (h: the CH potentials, `use_pot`) or TD-Dijkstra (h = 0) from source seeds departing at week time
    `tau0` to the best target seed; arcs whose `arc_flags & excl` are skipped.

    `sources` = (nodes, parts ds, rows): a source seed starts its node at `tau0 + ttf(part)`; `targets` = (nodes,
    turn ds, parts ds, rows, lower bounds): reaching target seed j's node at tau arrives at `tau' + ttf(part)(tau')`,
    `tau' = tau + turn` (one seed per node). out <- [arrival, end node, settled, relaxed, path arcs, source seed,
    target seed]; the path's search arcs go to `state.buf`.
    """
    s_nodes, s_part, s_row = sources
    t_nodes, t_turn, t_part, t_row, t_lb = targets
    factor = g.factor
    lab_, dst, pred, st, hk = state.lab, state.dst, state.pred, state.st, state.hk
    tmark, tidx, out = state.tmark, state.tidx, state.out
    lab = 2 * q
    done = lab + 1
    for j in range(t_nodes.shape[0]):
        tmark[t_nodes[j]] = q
        tidx[t_nodes[j]] = j
    if use_pot:
        t_ranks = np.empty(t_nodes.shape[0], np.int32)
        for j in range(t_nodes.shape[0]):
            t_ranks[j] = h.rank[t_nodes[j]]
        _backward_upward(h, t_ranks, t_lb, state, q)
    size = 0
    for i in range(s_nodes.shape[0]):
        v = s_nodes[i]
        a = tau0 + ttf(s_part[i], s_row[i], factor, tau0)
        if st[v] < lab or a < lab_[v]:
            hv = potential(h, h.rank[v], state, q) if use_pot else 0
            if hv >= INF_WEIGHT:
                continue
            lab_[v] = a
            dst[v] = 0
            pred[v] = -1 - i
            st[v] = lab
            size = qpush(hk, size, ((a - tau0 + hv) << 32) | v)
    best = INF_WEIGHT
    best_node = -1
    settled = 0
    relaxed = 0
    first_out, head, turn, flags, node_dur, node_row = (
        g.first_out,
        g.arc_head,
        g.arc_turn,
        g.arc_flags,
        g.node_dur,
        g.node_row,
    )  # noqa: E501
    while size > 0:
        item, size = qpop(hk, size)
        key = item >> 32
        u = np.int32(item & 0xFFFFFFFF)
        if st[u] == done:
            continue
        if key >= best:
            break
        st[u] = done
        settled += 1
        tu = lab_[u]
        if tmark[u] == q:
            j = tidx[u]
            tt = tu + t_turn[j]
            c = tt + ttf(t_part[j], t_row[j], factor, tt) - tau0
            if c < best:
                best = c
                best_node = u
        for e in range(first_out[u], first_out[u + 1]):
            if flags[e] & excl:
                continue
            v = head[e]
            d = node_dur[v]
            if d < 0 or st[v] == done:
                continue
            relaxed += 1
            te = tu + turn[e]
            a = te + ttf(d, node_row[v], factor, te)
            if st[v] < lab or a < lab_[v]:
                hv = potential(h, h.rank[v], state, q) if use_pot else 0
                if hv >= INF_WEIGHT:
                    continue
                lab_[v] = a
                pred[v] = e
                st[v] = lab
                size = qpush(hk, size, ((a - tau0 + hv) << 32) | v)
    out[0] = best
    out[1] = best_node
    out[2] = settled
    out[3] = relaxed
    out[4] = 0
    if best_node >= 0:
        k = 0
        v = best_node
        buf = state.buf
        while pred[v] >= 0:
            buf[k] = pred[v]
            k += 1
            v = g.arc_tail[pred[v]]
        for i in range(k // 2):
            buf[i], buf[k - 1 - i] = buf[k - 1 - i], buf[i]
        out[4] = k
        out[5] = -1 - pred[v]
        out[6] = tidx[best_node]


@kernel
def set_potentials(h, t_ranks, t_cost, state, q, pot):  # pragma: no cover - numba
    """pot[v] <- the exact lower-bound distance from every search node v to the nearest of a target set (seeds at
    ranks `t_ranks` with costs `t_cost`; INF_WEIGHT: none reachable): the backward upward search from all of them,
    then one sweep down the ranks, `h(r) = min(b(r), min over upward arcs (r, w) of up(r, w) + h(w))` (the CH
    potential of `potential`, for every node at once: a table's destinations are shared by all its rows)."""
    _backward_upward(h, t_ranks, t_cost, state, q)
    pval, bval, bst = state.pval, state.bval, state.bst
    up_first, up_arcs, rank = h.up_first, h.up_arcs, h.rank
    n = rank.shape[0]
    for r in range(n - 1, -1, -1):
        best = bval[r] if bst[r] >= 2 * q else INF_WEIGHT
        for k in range(up_first[r], up_first[r + 1]):
            c = pval[up_arcs[k, 0]] + up_arcs[k, 1]
            if c < best:
                best = c
        pval[r] = best
    for v in range(n):
        pot[v] = pval[rank[v]]


@kernel
def td_tree(g, excl, sources, tau0, targets, cutoff, pot, state, q, arrive, dist):  # pragma: no cover - numba
    """TD-Dijkstra from one phantom's source seeds departing at `tau0`, until every target seed node is settled or
    the smallest key passes the largest arrival found once every target phantom has one (or, with no targets, until
    the smallest label passes `tau0 + cutoff`): a table row and an isochrone's tree. `pot`: per node a consistent
    lower bound of the time to the nearest target (`set_potentials`; zeros: Dijkstra), so the search is TD-A* towards
    the target set (a node settles with its exact label; one with INF_WEIGHT is skipped). The early stop is exact: a
    target seed node v not yet settled would give its phantom `lab(v) + turn + ttf(part) >= lab(v) + pot(v)`, its
    key, at least the smallest key, so strictly more than the arrival that phantom has (ties on distance included).

    `sources` = (nodes, parts, rows, dists); `targets` = (nodes sorted, turn, parts, rows, dists, phantom index) with
    one entry per (node, phantom). `arrive[p]` / `dist[p]` <- the earliest arrival (ds after `tau0`) at target
    phantom p and the distance (dm) of that path (INF_WEIGHT unreachable; the caller fills them with INF first).
    out <- [settled, relaxed]."""
    s_nodes, s_part, s_row, s_dist = sources
    t_nodes, t_turn, t_part, t_row, t_dist, t_of = targets
    factor = g.factor
    lab_, dst, pred, st, hk = state.lab, state.dst, state.pred, state.st, state.hk
    tmark, tidx, out = state.tmark, state.tidx, state.out
    lab = 2 * q
    done = lab + 1
    left = 0
    for j in range(t_nodes.shape[0]):
        v = t_nodes[j]
        if tmark[v] != q:
            tmark[v] = q
            tidx[v] = j
            left += 1
    size = 0
    for i in range(s_nodes.shape[0]):
        v = s_nodes[i]
        a = tau0 + ttf(s_part[i], s_row[i], factor, tau0)
        if pot[v] >= INF_WEIGHT:
            continue
        if st[v] < lab or a < lab_[v]:
            lab_[v] = a
            dst[v] = s_dist[i]
            pred[v] = -1 - i
            st[v] = lab
            size = qpush(hk, size, ((a - tau0 + pot[v]) << 32) | v)
    settled = 0
    relaxed = 0
    nt = t_nodes.shape[0]
    bound = np.int64(-1)  # the largest arrival found, while every target phantom has one (INF_WEIGHT: not yet)
    first_out, head, turn, flags, node_dur, node_row = (
        g.first_out,
        g.arc_head,
        g.arc_turn,
        g.arc_flags,
        g.node_dur,
        g.node_row,
    )  # noqa: E501
    while size > 0:
        item, size = qpop(hk, size)
        key = item >> 32
        u = np.int32(item & 0xFFFFFFFF)
        if st[u] == done:
            continue
        if nt == 0 and key > cutoff:
            break
        if nt > 0 and key > bound:  # every target phantom found, all before this key: none can improve
            bound = _largest_found(arrive)
            if bound < INF_WEIGHT and key > bound:
                break
        st[u] = done
        settled += 1
        tu = lab_[u]
        if tmark[u] == q:
            j = tidx[u]
            while j < nt and t_nodes[j] == u:
                tt = tu + t_turn[j]
                c = tt + ttf(t_part[j], t_row[j], factor, tt) - tau0
                p = t_of[j]
                dd = dst[u] + t_dist[j]
                if c < arrive[p] or (c == arrive[p] and dd < dist[p]):
                    if arrive[p] >= INF_WEIGHT:
                        bound = np.int64(-1)  # one more phantom found: look again at the next pop
                    arrive[p] = c
                    dist[p] = dd
                j += 1
            left -= 1
            if left == 0:
                break
        for e in range(first_out[u], first_out[u + 1]):
            if flags[e] & excl:
                continue
            v = head[e]
            d = node_dur[v]
            if d < 0 or st[v] == done:
                continue
            relaxed += 1
            te = tu + turn[e]
            a = te + ttf(d, node_row[v], factor, te)
            if pot[v] >= INF_WEIGHT:
                continue
            if st[v] < lab or a < lab_[v]:
                lab_[v] = a
                dst[v] = dst[u] + g.arc_dist[e]
                pred[v] = e
                st[v] = lab
                size = qpush(hk, size, ((a - tau0 + pot[v]) << 32) | v)
    out[0] = settled
    out[1] = relaxed


@kernel(nrt=False)
def _largest_found(arrive):  # pragma: no cover - numba
    """The largest of `arrive`, INF_WEIGHT when one is still INF_WEIGHT (not found)."""
    big = np.int64(-1)
    for p in range(arrive.shape[0]):
        if arrive[p] > big:
            big = arrive[p]
    return big


@kernel
def walk_times(arcs, parts, rows, turns, factor, tau0, out):  # pragma: no cover - numba
    """Time a fixed path piece by piece from `tau0`: piece k enters after its turn and lasts `ttf(parts[k])`;
    out[k] <- the piece's time (turn included). Returns the arrival."""
    tau = np.int64(tau0)
    for k in range(arcs.shape[0]):
        t1 = tau + turns[k]
        t2 = t1 + ttf(parts[k], rows[k], factor, t1)
        out[k] = t2 - tau
        tau = t2
    return tau


# ------------------------------------------------------------------------------------------------ building the inputs


def factors_from_percent(pct: np.ndarray) -> np.ndarray:
    """int32 [P, SLOTS] factors of speed rows in percent of free flow (the format's `round(TD_ONE * 100 / pct)`)."""
    p = np.asarray(pct, dtype=np.float64).reshape(-1, SLOTS)
    return np.round(TD_ONE * 100.0 / p).astype(np.int32)


def td_arrays(
    first_out: np.ndarray,
    arc_head: np.ndarray,
    arc_tail: np.ndarray,
    arc_turn: np.ndarray,
    arc_flags: np.ndarray,
    arc_dist: np.ndarray,
    node_dur: np.ndarray,
    node_row: np.ndarray,
    factor: np.ndarray | None,
) -> TDArrays:
    """`TDArrays` of a search graph (contiguous, the dtypes the kernels take); `factor` None: no profile (every
    `node_row` must then be -1)."""
    fac = np.full((1, SLOTS), TD_ONE, np.int32) if factor is None or len(factor) == 0 else factor
    fac = np.ascontiguousarray(fac, dtype=np.int32)

    def c(a: np.ndarray, dt: type) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=dt)

    return TDArrays(
        c(first_out, np.int32), c(arc_head, np.int32), c(arc_tail, np.int32), c(arc_turn, np.int32),
        c(arc_flags, np.uint8), c(arc_dist, np.int32), c(node_dur, np.int32), c(node_row, np.int32), fac,
        fac.min(axis=1).astype(np.int64),
    )  # fmt: skip


def lower_bound_weights(g: TDArrays) -> np.ndarray:
    """int32 per search arc: the lower-bound metric `turn + lb(head)` (closed heads: their static duration, the arc is
    forbidden anyway)."""
    head = g.arc_head.astype(np.int64)
    d = g.node_dur[head].astype(np.int64)
    row = g.node_row[head]
    lb = d.copy()
    prof = (row >= 0) & (d > 0)
    lb[prof] = (d[prof] * g.row_min[row[prof]]) // TD_ONE
    return (g.arc_turn.astype(np.int64) + np.maximum(lb, 0)).astype(np.int32)


def hierarchy_of(ch: dict[str, np.ndarray] | object) -> TDHierarchy:
    """`TDHierarchy` of a customized hierarchy (a `Graph` or a dict holding the `ch_*` arrays)."""
    get = ch.__getitem__ if isinstance(ch, dict) else lambda k: ch.arrays[k]  # type: ignore[attr-defined]
    return TDHierarchy(*(np.ascontiguousarray(get(k)) for k in ("ch_rank", "ch_up_first", "ch_up_arcs",
                                                                 "ch_down_first", "ch_down_arcs")))  # fmt: skip


def no_hierarchy(n: int) -> TDHierarchy:
    """A stand-in hierarchy (no arcs) for searches without potentials."""
    z = np.zeros(n + 1, np.int32)
    return TDHierarchy(np.zeros(max(n, 1), np.int32), z, np.zeros((0, 4), np.int32), z, np.zeros((0, 4), np.int32))


def window_minimum(factor: np.ndarray, a: int, b: int, step: int = TD_ONE // 8) -> np.ndarray:
    """int64 [P]: per row a lower bound of the factor over week times [a, b] (the exact minimum of the piecewise-linear
    factor there, at the ends or a midpoint inside, rounded down to a multiple of `step` so that few distinct windows
    arise), never below the row's weekly minimum. An arc entered in [a, b] takes at least its static duration times
    this: the lower-bound metric of a search whose arrivals stay in the window (`app.engine.features.departure`)."""
    fac = factor.astype(np.int64)
    weekly = fac.min(axis=1)
    if b - a >= WEEK_DS - 2 * SLOT_DS:
        return weekly

    def at(t: int) -> np.ndarray:
        s = (t - _HALF_SLOT) % WEEK_DS
        k, r = divmod(s, SLOT_DS)
        return (fac[:, k] * (SLOT_DS - r) + fac[:, (k + 1) % SLOTS] * r) // SLOT_DS

    lo = np.minimum(at(a), at(b))
    k0 = (a - _HALF_SLOT) // SLOT_DS + 1  # the midpoints strictly inside (a, b)
    k1 = (b - _HALF_SLOT - 1) // SLOT_DS
    if k1 >= k0:
        lo = np.minimum(lo, fac[:, np.arange(k0, k1 + 1) % SLOTS].min(axis=1))
    return np.maximum(lo // step * step, weekly)
