"""Alternative routes through via nodes on the hierarchy (OSRM's CH alternatives, Abraham et al.'s via-node method).

One bidirectional upward search without stall-on-demand (`via_search`), each direction until its smallest key weighs
more than `MAX_STRETCH` x the best weight W (found on the way), so every node v settled in both directions with
`f(v) + b(v) <= 1.25 W` is a candidate via node (f, b: upward distances, upper bounds on d(s, v), d(v, t)). Each
gets OSRM's approximate sharing with the packed best path (a direction's label where its search tree meets that
path, carried down the tree), and candidates are tried in OSRM's order, `2 (f + b) + sharing` ascending. OSRM also
drops candidates whose approximate sharing exceeds 0.75 W or whose unshared part is over the stretch; measured on
Porto (200 pairs) that left 27 % of pairs without a candidate instead of 16 %, so here the approximations only rank.

A candidate's route is `s -> v -> t` made of two exact shortest paths (`via_path`): an upward search from v backward
meets the forward search's settled labels (every top node of a path s -> v within the stretch was settled, so the
meeting is d(s, v) whenever the route can be within the stretch), one forward from v meets the backward labels;
both halves unpacked. At most `MAX_TRIES` candidates are computed per request, none through a node of a route
computed before. The caller (`app.engine.features.alternatives`) checks the rules exactly: stretch, sharing, no node
twice,
and local optimality by OSRM's T-test (`locally_optimal`): the stretch from the last node at least `MIN_PLATEAU` W
before v to the first one at least that far after it (or the route's ends) must be a shortest path (one CH query).
The two halves are shortest paths, so every stretch of weight at most `MIN_PLATEAU` W not crossing v is one, and
each crossing v lies inside the tested one: the route is locally optimal up to `MIN_PLATEAU` W, the plateau
method's guarantee.

Labels are `app.engine.search.ch`'s rows and stamps; the directions are its `settle_next` with an empty stall graph (see
`STALL`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from app.engine.search.cch_query import CCHSearch, has_tree
from app.engine.search.ch import (
    D_BITS,
    L_D,
    L_PARC,
    L_T,
    L_W,
    CHLabels,
    CHSearch,
    _owner,
    _pick_seed,
    add_row,
    ch_heap,
    ch_seeds,
    fresh_stamps,
    init_seeds,
    new_labels,
    parent_arc,
    row_of,
    settle_next,
    state_of,
    unpack_path,
)
from app.engine.types import INF_WEIGHT, Seeds
from floor.format.arrays import CH_PREFIX
from floor.kernels.heap import heap_push
from floor.kernels.jit import kernel

Candidate = tuple[np.ndarray, int, int, int, int]  # search arcs, arcs before v, source/target seed, weight ds
# Stall-on-demand in the candidate search keeps the halves exact (the top node of a shortest path is never stalled)
# and halves its time on Porto (0.20 -> 0.11 ms p50), but leaves fewer candidates: 82 % of pairs found an
# alternative by via nodes instead of 85 %, so more fell back to plateaus (tens of ms). Off, as in OSRM.
STALL = False
MAX_TRIES = 12  # candidates whose route is computed before giving up (then the plateau method answers)


@kernel
def via_search(ch, stall, seeds, labels, base, counters, orders, mark, shares, stretch):  # pragma: no cover - numba
    """(status, best weight, candidates [k, 3] as rank, f + b, approximate sharing), unsorted.

    status 0 = done, -1 = a heap is full (grow it and rerun), -2 = a bad seed. Both directions run without stalling
    until their smallest key weighs more than `stretch` x the best weight; `orders` [2, n] receive each direction's
    settled ranks in order (room for every rank); `stall` is the forward and backward stall graph (first, arcs)."""
    rank, up_first, up_arcs, down_first, down_arcs, _ = ch
    fs_first, fs_arcs, bs_first, bs_arcs = stall
    s_nodes, s_w, s_d, s_t, t_nodes, t_w, t_d, t_t = seeds
    f_slot, f_lab, b_slot, b_lab, f_keys, f_nodes, b_keys, b_nodes = labels
    f_order, b_order, f_share, b_share = orders[0], orders[1], shares[0], shares[1]
    nup = up_arcs.shape[0]
    none = np.zeros((0, 3), dtype=np.int64)
    fsize = init_seeds(rank, s_nodes, s_w, s_d, s_t, f_slot, f_lab, f_keys, f_nodes, base)
    bsize = init_seeds(rank, t_nodes, t_w, t_d, t_t, b_slot, b_lab, b_keys, b_nodes, base)
    if fsize < 0 or bsize < 0:
        return min(fsize, bsize), INF_WEIGHT, none
    best_w = INF_WEIGHT
    limit = INF_WEIGHT
    meet = -1
    nf = 0
    nb = 0
    f_on = True
    b_on = True
    while True:
        if f_on and (fsize == 0 or (f_keys[0] >> D_BITS) > limit):
            f_on = False
        if b_on and (bsize == 0 or (b_keys[0] >> D_BITS) > limit):
            b_on = False
        if not f_on and not b_on:
            break
        if f_on and (not b_on or b_keys[0] >= f_keys[0]):
            fsize, v, status = settle_next(
                up_first, up_arcs, 0, fs_first, fs_arcs, f_slot, f_lab, f_keys, f_nodes, fsize, base, counters
            )
            if status == 1:
                f_order[nf] = v
                nf += 1
        else:
            bsize, v, status = settle_next(
                down_first, down_arcs, nup, bs_first, bs_arcs, b_slot, b_lab, b_keys, b_nodes, bsize, base, counters
            )
            if status == 1:
                b_order[nb] = v
                nb += 1
        if status < 0:
            return -1, INF_WEIGHT, none
        if status == 1 and state_of(f_slot, v) == base + 1 and state_of(b_slot, v) == base + 1:
            cw = f_lab[row_of(f_slot, v), L_W] + b_lab[row_of(b_slot, v), L_W]
            if cw < best_w:
                best_w = cw
                meet = v
                limit = np.int64(stretch * best_w)
    if meet < 0:
        return 0, INF_WEIGHT, none
    # the packed best path, then each direction's approximate sharing with it (OSRM), in settle order
    v = meet
    mark[v] = base
    while parent_arc(f_slot, f_lab, v) >= 0:
        v = _owner(up_first, parent_arc(f_slot, f_lab, v))
        mark[v] = base
    v = meet
    while parent_arc(b_slot, b_lab, v) >= 0:
        v = _owner(down_first, parent_arc(b_slot, b_lab, v) - nup)
        mark[v] = base
    for i in range(nf):
        v = f_order[i]
        r = row_of(f_slot, v)
        if mark[v] == base:
            f_share[v] = f_lab[r, L_W]
        elif f_lab[r, L_PARC] >= 0:
            f_share[v] = f_share[_owner(up_first, f_lab[r, L_PARC])]
        else:
            f_share[v] = 0
    for i in range(nb):
        v = b_order[i]
        r = row_of(b_slot, v)
        if mark[v] == base:
            b_share[v] = b_lab[r, L_W]
        elif b_lab[r, L_PARC] >= 0:
            b_share[v] = b_share[_owner(down_first, b_lab[r, L_PARC] - nup)]
        else:
            b_share[v] = 0
    out = np.empty((nf, 3), dtype=np.int64)
    k = 0
    for i in range(nf):
        v = f_order[i]
        if v == meet or state_of(b_slot, v) != base + 1:
            continue
        w = f_lab[row_of(f_slot, v), L_W] + b_lab[row_of(b_slot, v), L_W]
        sh = f_share[v] + b_share[v]
        if w > limit:
            continue
        out[k, 0] = v
        out[k, 1] = w
        out[k, 2] = sh
        k += 1
    return 0, best_w, out[:k]


@kernel(nrt=False)
def _half(
    root, g_first, g_arcs, arc_base, no_first, no_arcs, o_slot, other, other_base, h_slot, h_lab, h_keys, h_nodes,
    hbase, counters, limit,
):  # fmt: skip  # pragma: no cover - numba
    """(status, weight, meeting rank) of one half of a via route: an upward search from `root` over `g_*` until its
    smallest key is not below the best meeting with `other`'s settled labels (or above `limit`)."""
    h_slot[h_slot.shape[0] - 1] = 0  # a new query of these labels: no rows handed out
    r = add_row(h_slot, root, hbase)
    h_lab[r, L_W] = 0
    h_lab[r, L_D] = 0
    h_lab[r, L_PARC] = -1
    h_lab[r, L_T] = 0
    size = heap_push(h_keys, h_nodes, 0, np.int64(0), np.int32(root))
    best = INF_WEIGHT
    meet = -1
    while size > 0:
        top = h_keys[0] >> D_BITS
        if top >= best or top > limit:
            break
        size, u, status = settle_next(
            g_first, g_arcs, arc_base, no_first, no_arcs, h_slot, h_lab, h_keys, h_nodes, size, hbase, counters
        )
        if status < 0:
            return -1, INF_WEIGHT, -1
        if status == 1 and state_of(o_slot, u) == other_base + 1:
            c = other[row_of(o_slot, u), L_W] + h_lab[row_of(h_slot, u), L_W]
            if c < best:
                best = c
                meet = u
    return 0, best, meet


@kernel
def via_path(
    v, ch, no_first, no_arcs, labels, base, h_slot, h_lab, h_keys, h_nodes, hbase, counters, limit
):  # fmt: skip  # pragma: no cover - numba
    """(status, weight, search arcs s -> v -> t, arcs before v, source rank, target rank) of the via route through
    rank `v`: status 0 found, 1 none within `limit`, -1 the heap is full. Uses stamps `hbase` and `hbase + 3`;
    `labels` are `via_search`'s (only the label rows are read)."""
    _, up_first, up_arcs, down_first, down_arcs, unpack = ch
    f_slot, f_lab, b_slot, b_lab = labels[0], labels[1], labels[2], labels[3]
    none = np.zeros(0, dtype=np.int32)
    nup = up_arcs.shape[0]
    st, w1, x = _half(
        v, down_first, down_arcs, nup, no_first, no_arcs, f_slot, f_lab, base, h_slot, h_lab, h_keys, h_nodes, hbase,
        counters, limit,
    )  # fmt: skip
    if st < 0:
        return -1, INF_WEIGHT, none, 0, -1, -1
    if x < 0 or w1 > limit:
        return 1, INF_WEIGHT, none, 0, -1, -1
    first, src, _ = unpack_path(x, f_slot, f_lab, h_slot, h_lab, up_first, down_first, unpack)
    st, w2, y = _half(
        v, up_first, up_arcs, 0, no_first, no_arcs, b_slot, b_lab, base, h_slot, h_lab, h_keys, h_nodes, hbase + 3,
        counters, limit - w1,
    )  # fmt: skip
    if st < 0:
        return -1, INF_WEIGHT, none, 0, -1, -1
    if y < 0 or w1 + w2 > limit:
        return 1, INF_WEIGHT, none, 0, -1, -1
    second, _, dst = unpack_path(y, h_slot, h_lab, b_slot, b_lab, up_first, down_first, unpack)
    arcs = np.empty(first.shape[0] + second.shape[0], dtype=np.int32)
    for i in range(first.shape[0]):
        arcs[i] = first[i]
    for i in range(second.shape[0]):
        arcs[first.shape[0] + i] = second[i]
    return 0, w1 + w2, arcs, first.shape[0], src, dst


@kernel
def _mark_heads(arcs, head, rank, seen):  # pragma: no cover - numba
    """Mark the rank of every search arc's head in `arcs` in `seen` (the nodes of a candidate route computed)."""
    for i in range(arcs.shape[0]):
        seen[rank[head[arcs[i]]]] = True


@kernel
def _t_test_stretch(arcs, weight, tail, head, before, window):  # pragma: no cover - numba
    """The T-test's stretch of a via route (search arcs `arcs`, the via node after `before` of them): (its first
    node, its last node, its weight ds), from the last node at least `window` ds before the via node (or the route's
    start) to the first one at least `window` after it (or the route's end); (-1, -1, 0) when it is one arc or none,
    a shortest path by itself."""
    n = arcs.shape[0]
    at = 0
    for k in range(before):
        at += weight[arcs[k]]
    lo = at - window
    hi = at + window
    i = 0  # the last prefix end k (cum[k]: weight of arcs[:k]) with cum[k] <= lo, 0 when none
    wi = 0
    j = n  # the first k with cum[k] >= hi, n when none; cum ends as cum[j]
    cum = 0
    for k in range(n + 1):
        if cum <= lo:
            i = k
            wi = cum
        if cum >= hi:
            j = k
            break
        if k < n:
            cum += weight[arcs[k]]
    if j - i <= 1:
        return -1, -1, 0
    a = np.int64(tail[arcs[0]]) if i == 0 else np.int64(head[arcs[i - 1]])
    return a, np.int64(head[arcs[j - 1]]), np.int64(cum - wi)


class ViaSearch:
    """One worker's via-node alternatives on one hierarchy (`prefix`, contracted or customized without
    `exclude_flags`): `candidates(...)` yields candidate routes best-ranked first, `locally_optimal` is the T-test."""

    def __init__(self, graph: object, search_graph: object, prefix: str = CH_PREFIX, exclude_flags: int = 0) -> None:
        tree = has_tree(graph)  # a customized CCH: the T-test's queries by the elimination-tree walk
        self.ch = (CCHSearch if tree else CHSearch)(graph, prefix, exclude_flags)
        sg: Any = search_graph  # the routes' arcs are its arcs
        self._tail, self._head, self._weight = (np.asarray(x) for x in (sg.arc_tail, sg.arc_head, sg.arc_weight))
        self._g = self.ch.hierarchy
        n = int(len(self._g.rank))
        self._labels = CHLabels(*new_labels(n), *new_labels(n), *ch_heap(), *ch_heap())
        self._h_lab, self._h_heap = new_labels(n), ch_heap()
        self._orders = np.zeros((2, n), dtype=np.int32)
        self._mark = np.zeros(n, dtype=np.int64)
        self._share = np.zeros((2, n), dtype=np.int64)
        no_first = np.zeros(n + 1, dtype=np.int32)
        no_arcs = np.zeros((0, 4), dtype=np.int32)
        no_first.setflags(write=False)
        no_arcs.setflags(write=False)
        self._no = (no_first, no_arcs)  # the empty stall graph: no stall-on-demand
        g = self._g
        self._stall = (g.down_first, g.down_arcs, g.up_first, g.up_arcs) if STALL else (*self._no, *self._no)
        self._counters = np.zeros(4, dtype=np.int64)
        self._cur = 0

    def candidates(self, sources: Seeds, targets: Seeds, stretch: float) -> Iterator[Candidate]:
        """Candidate via routes, OSRM's rank order, at most `MAX_TRIES`, none through a node of an earlier one: each
        as (search arcs, arcs before the via node, source seed index, target seed index, weight ds)."""
        rank = self._g.rank
        seeds = ch_seeds(sources, targets)
        s_n, s_w, s_d, _, t_n, t_w, t_d, _ = seeds
        while True:
            lab = self._labels
            cur = fresh_stamps(self._cur, (lab.f_slot, lab.f_lab), (lab.b_slot, lab.b_lab), self._h_lab)
            if cur < self._cur:  # stamps start again: so do the marks
                self._mark.fill(0)
            self._cur = cur + 1
            status, best_w, cand = via_search(
                self._g, self._stall, seeds, lab, 3 * self._cur, self._counters, self._orders, self._mark,
                self._share, stretch,
            )  # fmt: skip
            if status == 0:
                break
            if status == -2:
                raise ValueError("seed node id out of range")
            f_keys, f_nodes = ch_heap(2 * len(lab.f_keys))
            b_keys, b_nodes = ch_heap(2 * len(lab.b_keys))
            self._labels = lab._replace(f_keys=f_keys, f_nodes=f_nodes, b_keys=b_keys, b_nodes=b_nodes)
        base = 3 * self._cur
        if best_w >= INF_WEIGHT or len(cand) == 0:
            return
        limit = int(stretch * best_w)
        order = np.lexsort((cand[:, 0], 2 * cand[:, 1] + cand[:, 2]))
        seen = np.zeros(len(rank), dtype=np.bool_)  # ranks on a candidate route computed already
        tries = 0
        for i in order.tolist():
            v = int(cand[i, 0])
            if seen[v]:
                continue
            while True:
                self._cur += 2
                status, w, arcs, before, src, dst = via_path(
                    v, self._g, *self._no, self._labels, base, *self._h_lab, *self._h_heap, 3 * self._cur,
                    self._counters, limit,
                )  # fmt: skip
                if status >= 0:
                    break
                self._h_heap = ch_heap(2 * len(self._h_heap[0]))
            tries += 1
            if status == 0:
                _mark_heads(arcs, self._head, rank, seen)
                s_seed = int(_pick_seed(rank, s_n, s_w, s_d, src))
                t_seed = int(_pick_seed(rank, t_n, t_w, t_d, dst))
                yield arcs, int(before), s_seed, t_seed, int(w)
            if tries == MAX_TRIES:
                return

    def warm(self) -> None:
        """Run every kernel once (search node 0 to itself), so none compiles or loads during a request."""
        one = Seeds(np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), 0.0, 0.0)
        for _ in self.candidates(one, one, 1.25):
            pass
        rank = self._g.rank
        self._cur += 2
        via_path(
            np.int64(rank[0]), self._g, *self._no, self._labels, 3 * (self._cur - 2), *self._h_lab, *self._h_heap,
            3 * self._cur, self._counters, 0,
        )  # fmt: skip
        self.ch.weight_between(0, 0)
        one_arc = np.zeros(1, dtype=np.int32)
        _mark_heads(one_arc, self._head, rank, np.zeros(len(rank), dtype=np.bool_))
        _t_test_stretch(one_arc, self._weight, self._tail, self._head, 0, 0.0)

    def locally_optimal(self, arcs: np.ndarray, before: int, window: float) -> bool:
        """OSRM's T-test on a via route of search arcs `arcs`, its via node after `before`
        arcs: the stretch from the last node at least `window` ds before the via node to the first one at least
        `window` after it is a shortest path."""
        if len(arcs) == 0:
            return True
        a, b, weight = _t_test_stretch(arcs, self._weight, self._tail, self._head, before, float(window))
        return a < 0 or self.ch.weight_between(a, b) == weight
