"""arrive_by in one search (issue 44): the latest departure from the source seeds that reaches the target seeds by a
week time, by one backward time-dependent search from the targets.

FIFO (`timedep.ttf`: `tau + ttf(tau)` never decreases) makes each arc's arrival function invertible from the right:
`latest_entry(T)` is the latest integer entry time arriving by T, so the backward labels (the latest time a node's
road arc may be left and still arrive by the asked time) are label-setting exact, as forward labels are. The search
is A* on those labels with the exact lower-bound distance *from the source set* as potential (the CH potential of
`timedep.potential` mirrored: a forward upward search from the source seeds, then down arcs), so its keys `L(v) -
hs(v)` never increase along a relaxation (consistent) and it stops when the largest key reaches the best departure.
`td_reference`'s forward oracle, searched over departures (`departure.latest_departure`), is the test's answer.
"""

from __future__ import annotations

import numpy as np

from app.engine.search.timedep import TDArrays, TDHierarchy, TDState, memo_distance, ttf, upward_labels
from floor.format.units import INF_WEIGHT
from floor.kernels.heap import heap_pop, heap_push
from floor.kernels.jit import kernel


@kernel
def latest_entry(d, row, factor, t):  # pragma: no cover - numba
    """The latest integer week time `tau` with `tau + ttf(d, row, tau) <= t` (exact: arrival is non-decreasing in
    entry). A fixed-point guess, then galloping and bisection on the monotone arrival."""
    if row < 0 or d <= 0:
        return np.int64(t) - np.int64(d) if d > 0 else np.int64(t)
    t = np.int64(t)
    tau = t - ttf(d, row, factor, t)
    for _ in range(3):
        nt = t - ttf(d, row, factor, tau)
        if nt == tau:
            break
        tau = nt
    if tau + ttf(d, row, factor, tau) <= t:
        lo = tau
        step = np.int64(1)
        hi = lo + 1
        while hi + ttf(d, row, factor, hi) <= t:
            lo = hi
            step *= 2
            hi = lo + step
    else:
        hi = tau
        step = np.int64(1)
        lo = hi - 1
        while lo + ttf(d, row, factor, lo) > t:
            hi = lo
            step *= 2
            lo = hi - step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid + ttf(d, row, factor, mid) <= t:
            lo = mid
        else:
            hi = mid
    return lo


@kernel
def latest_along(parts, rows, turns, factor, by):  # pragma: no cover - numba
    """The latest departure along a fixed path arriving by week time `by`: from its last piece back, each piece's
    latest entry (`latest_entry`) less its turn (piece k: its turn, then its part `parts[k]` timed by `rows[k]`, as
    `timedep.walk_times` times it forward). A feasible departure, so no later than the best one."""
    t = np.int64(by)
    for k in range(parts.shape[0] - 1, -1, -1):
        t = latest_entry(parts[k], rows[k], factor, t) - turns[k]
    return t


@kernel
def _forward_upward(h, s_ranks, s_cost, state, q):  # pragma: no cover - numba
    """The lower-bound hierarchy's forward upward search from the source seeds, to exhaustion (labels in bval)."""
    upward_labels(h.up_first, h.up_arcs, s_ranks, s_cost, state, q)


@kernel
def source_potential(h, r0, state, q):  # pragma: no cover - numba
    """hs(r0): the exact lower-bound distance from the source set to rank r0 (INF_WEIGHT: unreachable), memoized per
    query: `hs(r) = min(f(r), min over down arcs (x, r) of hs(x) + w)`, every higher neighbour first."""
    return memo_distance(h.down_first, h.down_arcs, r0, state, q)


@kernel
def td_latest(g, in_first, in_arcs, h, use_pot, excl, sources, by, targets, state, q):  # pragma: no cover - numba
    """The latest departure (week time) from a source seed that reaches a target seed by week time `by` (-INF_WEIGHT
    when none does): backward TD-A* from the target seeds (`in_first` / `in_arcs`: each node's incoming search arcs).

    `sources` = (nodes, parts, rows, lower bounds of the parts); `targets` = (nodes, turn, parts, rows), as
    `timedep.td_route` takes them. out <- [departure, settled, relaxed]."""
    s_nodes, s_part, s_row, s_lb = sources
    t_nodes, t_turn, t_part, t_row = targets
    factor = g.factor
    lab_, st, hk, hn, tmark, out = state.lab, state.st, state.hk, state.hn, state.tmark, state.out
    lab = 2 * q
    done = lab + 1
    for i in range(s_nodes.shape[0]):
        tmark[s_nodes[i]] = q
    if use_pot:
        s_ranks = np.empty(s_nodes.shape[0], np.int32)
        for i in range(s_nodes.shape[0]):
            s_ranks[i] = h.rank[s_nodes[i]]
        _forward_upward(h, s_ranks, s_lb, state, q)
    size = 0
    for j in range(t_nodes.shape[0]):
        v = t_nodes[j]
        a = latest_entry(t_part[j], t_row[j], factor, by) - t_turn[j]
        if st[v] < lab or a > lab_[v]:
            hv = source_potential(h, h.rank[v], state, q) if use_pot else 0
            if hv >= INF_WEIGHT:
                continue
            lab_[v] = a
            st[v] = lab
            size = heap_push(hk, hn, size, hv - a, v)
    best = -INF_WEIGHT
    settled = 0
    relaxed = 0
    first_in, tail, turn, flags, node_dur, node_row = (
        in_first,
        g.arc_tail,
        g.arc_turn,
        g.arc_flags,
        g.node_dur,
        g.node_row,
    )
    while size > 0:
        key, v, size = heap_pop(hk, hn, size)
        if st[v] == done:
            continue
        if -key <= best:
            break
        st[v] = done
        settled += 1
        lv = lab_[v]
        if tmark[v] == q:
            for i in range(s_nodes.shape[0]):
                if s_nodes[i] == v:
                    dep = latest_entry(s_part[i], s_row[i], factor, lv)
                    if dep > best:
                        best = dep
        d = node_dur[v]
        if d < 0:
            continue  # a closed road arc is entered by no arc
        te = latest_entry(d, node_row[v], factor, lv)
        for k in range(first_in[v], first_in[v + 1]):
            e = in_arcs[k]
            if flags[e] & excl:
                continue
            u = tail[e]
            if st[u] == done:
                continue
            relaxed += 1
            a = te - turn[e]
            if st[u] < lab or a > lab_[u]:
                hu = source_potential(h, h.rank[u], state, q) if use_pot else 0
                if hu >= INF_WEIGHT:
                    continue
                lab_[u] = a
                st[u] = lab
                size = heap_push(hk, hn, size, hu - a, u)
    out[0] = best
    out[1] = settled
    out[2] = relaxed


def incoming(g: TDArrays) -> tuple[np.ndarray, np.ndarray]:
    """Each search node's incoming search arcs: (first int32 [N+1], arcs int32 [T]), arcs in id order per node."""
    n = g.node_dur.shape[0]
    order = np.argsort(g.arc_head, kind="stable").astype(np.int32)
    first = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(g.arc_head, minlength=n), out=first[1:])
    return first.astype(np.int32), order


__all__ = ["TDHierarchy", "TDState", "incoming", "latest_along", "latest_entry", "source_potential", "td_latest"]
