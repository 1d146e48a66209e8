"""Contraction-hierarchy point-to-point queries: bidirectional upward search with stall-on-demand, path unpacking.

The graph's `ch_*` arrays (see `preprocessing.contract`) are read-only and shared; a `CHSearch` owns its per-query
arrays (allocated once, reset by a timestamp) and is used by one thread at a time.

Labels are (weight ds, distance dm) pairs ordered lexicographically, heap ties on the smaller rank, so a search is a
deterministic function of its seeds. The answer is the lexicographic minimum over the meeting nodes that both
directions settle without stalling (stalling compares weights only, so the weight is always Dijkstra's). `CHTable`
(app.engine.table) runs the very same one-direction kernel, so its weights *and* distances equal `CHSearch`'s.

Per-node state is one int32 per direction: `state[v] - 3*cur` is 0 (labelled), 1 (settled) or 2 (stalled); any
smaller value means "not reached in this query".
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from .errors import GraphError
from .types import INF_WEIGHT, SearchResult, SearchStats, Seeds

NO_CH_MESSAGE = "graph has no contraction hierarchy: re-run `starroute preprocess` without --no-ch"
INF = int(INF_WEIGHT)
_STAMP_MAX = (2**31 - 1) // 3 - 2
_HEAP_START = 1024


def ch_arrays(graph: object) -> dict[str, np.ndarray]:
    """The CH arrays of `graph` as plain ndarrays; raises GraphError when it has none."""
    names = (
        "ch_rank",
        "ch_up_first",
        "ch_up_head",
        "ch_up_weight",
        "ch_up_dist",
        "ch_down_first",
        "ch_down_tail",
        "ch_down_weight",
        "ch_down_dist",
        "ch_unpack_a",
        "ch_unpack_b",
    )
    has = getattr(graph, "has", None)
    if has is None or not all(has(name) for name in names):
        raise GraphError(NO_CH_MESSAGE)
    return {name: np.asarray(getattr(graph, name)) for name in names}


# --------------------------------------------------------------------------------------------------------------------
# lexicographic lazy heap: (weight int64, dist int64, node int32), ties on the smaller node


@nb.njit(cache=True, nogil=True, inline="always")
def _lt(w1: int, d1: int, w2: int, d2: int) -> bool:
    return w1 < w2 or (w1 == w2 and d1 < d2)


@nb.njit(cache=True, nogil=True, inline="always")
def _hless(hw: np.ndarray, hd: np.ndarray, hn: np.ndarray, i: int, j: int) -> bool:
    if hw[i] != hw[j]:
        return hw[i] < hw[j]
    if hd[i] != hd[j]:
        return hd[i] < hd[j]
    return hn[i] < hn[j]


@nb.njit(cache=True, nogil=True)
def hpush(hw: np.ndarray, hd: np.ndarray, hn: np.ndarray, size: int, w: int, d: int, node: int) -> int:
    """Insert (w, d, node); returns the new size (the caller checks capacity)."""
    i = size
    hw[i] = w
    hd[i] = d
    hn[i] = node
    while i > 0:
        p = (i - 1) >> 1
        if _hless(hw, hd, hn, i, p):
            hw[i], hw[p] = hw[p], hw[i]
            hd[i], hd[p] = hd[p], hd[i]
            hn[i], hn[p] = hn[p], hn[i]
            i = p
        else:
            break
    return size + 1


@nb.njit(cache=True, nogil=True)
def hpop(hw: np.ndarray, hd: np.ndarray, hn: np.ndarray, size: int) -> tuple[int, int, int, int]:
    """Remove the minimum; returns (w, d, node, new size)."""
    w = hw[0]
    d = hd[0]
    node = hn[0]
    size -= 1
    if size > 0:
        hw[0] = hw[size]
        hd[0] = hd[size]
        hn[0] = hn[size]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= size:
                break
            if c + 1 < size and _hless(hw, hd, hn, c + 1, c):
                c += 1
            if _hless(hw, hd, hn, c, i):
                hw[i], hw[c] = hw[c], hw[i]
                hd[i], hd[c] = hd[c], hd[i]
                hn[i], hn[c] = hn[c], hn[i]
                i = c
            else:
                break
    return w, d, node, size


# --------------------------------------------------------------------------------------------------------------------
# one search direction


@nb.njit(cache=True, nogil=True)
def init_seeds(
    ranks: np.ndarray,
    sw: np.ndarray,
    sd: np.ndarray,
    lw: np.ndarray,
    ld: np.ndarray,
    state: np.ndarray,
    parc: np.ndarray,
    hw: np.ndarray,
    hd: np.ndarray,
    hn: np.ndarray,
    base: int,
) -> int:
    """Label the seeds (lexicographic minimum per node, first index on ties); returns the heap size, -1 if full."""
    size = 0
    for i in range(ranks.shape[0]):
        v = ranks[i]
        w = sw[i]
        d = sd[i]
        if w >= INF:
            continue
        if state[v] < base or _lt(w, d, lw[v], ld[v]):
            state[v] = base
            lw[v] = w
            ld[v] = d
            parc[v] = -1
            if size == hw.shape[0]:
                return -1
            size = hpush(hw, hd, hn, size, w, d, v)
    return size


@nb.njit(cache=True, nogil=True)
def settle_next(
    g_first: np.ndarray,
    g_node: np.ndarray,
    g_w: np.ndarray,
    g_d: np.ndarray,
    arc_base: int,
    s_first: np.ndarray,
    s_node: np.ndarray,
    s_w: np.ndarray,
    lw: np.ndarray,
    ld: np.ndarray,
    state: np.ndarray,
    parc: np.ndarray,
    hw: np.ndarray,
    hd: np.ndarray,
    hn: np.ndarray,
    size: int,
    base: int,
    counters: np.ndarray,
) -> tuple[int, int, int]:
    """Settle the next node of one direction: (new heap size, node, status).

    status 1 = settled and relaxed, 2 = stalled (a higher labelled node reaches it strictly cheaper through the
    stall graph `s_*`), 0 = heap exhausted, -1 = heap full (grow and rerun). `parc[x]` gets the CH arc id
    `arc_base + e` of the search-graph arc `e` that labelled `x`. counters[0] += settled, counters[1] += relaxed.
    """
    cap = hw.shape[0]
    while size > 0:
        w, d, v, size = hpop(hw, hd, hn, size)
        if state[v] != base or w != lw[v] or d != ld[v]:
            continue
        counters[0] += 1
        for e in range(s_first[v], s_first[v + 1]):
            x = s_node[e]
            if state[x] >= base and lw[x] + s_w[e] < w:
                state[v] = base + 2
                return size, v, 2
        state[v] = base + 1
        for e in range(g_first[v], g_first[v + 1]):
            x = g_node[e]
            counters[1] += 1
            sx = state[x]
            if sx > base:
                continue
            nw = w + g_w[e]
            nd = d + g_d[e]
            if sx < base or _lt(nw, nd, lw[x], ld[x]):
                if size == cap:
                    return size, v, -1
                state[x] = base
                lw[x] = nw
                ld[x] = nd
                parc[x] = arc_base + e
                size = hpush(hw, hd, hn, size, nw, nd, x)
        return size, v, 1
    return size, -1, 0


# --------------------------------------------------------------------------------------------------------------------
# bidirectional query and unpacking


@nb.njit(cache=True, nogil=True)
def _query(
    up_first: np.ndarray,
    up_head: np.ndarray,
    up_w: np.ndarray,
    up_d: np.ndarray,
    dn_first: np.ndarray,
    dn_tail: np.ndarray,
    dn_w: np.ndarray,
    dn_d: np.ndarray,
    s_ranks: np.ndarray,
    s_w: np.ndarray,
    s_d: np.ndarray,
    t_ranks: np.ndarray,
    t_w: np.ndarray,
    t_d: np.ndarray,
    f_lw: np.ndarray,
    f_ld: np.ndarray,
    f_state: np.ndarray,
    f_parc: np.ndarray,
    b_lw: np.ndarray,
    b_ld: np.ndarray,
    b_state: np.ndarray,
    b_parc: np.ndarray,
    f_hw: np.ndarray,
    f_hd: np.ndarray,
    f_hn: np.ndarray,
    b_hw: np.ndarray,
    b_hd: np.ndarray,
    b_hn: np.ndarray,
    base: int,
    counters: np.ndarray,
) -> tuple[int, int, int, int]:
    """(status, best weight, best dist, meeting rank); status -1 = a heap is full."""
    nup = up_head.shape[0]
    fsize = init_seeds(s_ranks, s_w, s_d, f_lw, f_ld, f_state, f_parc, f_hw, f_hd, f_hn, base)
    bsize = init_seeds(t_ranks, t_w, t_d, b_lw, b_ld, b_state, b_parc, b_hw, b_hd, b_hn, base)
    if fsize < 0 or bsize < 0:
        return -1, INF, INF, -1
    best_w = INF
    best_d = INF
    meet = -1
    f_on = True
    b_on = True
    while True:
        if f_on and (fsize == 0 or not _lt(f_hw[0], f_hd[0], best_w, best_d)):
            f_on = False
        if b_on and (bsize == 0 or not _lt(b_hw[0], b_hd[0], best_w, best_d)):
            b_on = False
        if not f_on and not b_on:
            break
        if f_on and (not b_on or not _lt(b_hw[0], b_hd[0], f_hw[0], f_hd[0])):
            fsize, v, status = settle_next(
                up_first,
                up_head,
                up_w,
                up_d,
                0,
                dn_first,
                dn_tail,
                dn_w,
                f_lw,
                f_ld,
                f_state,
                f_parc,
                f_hw,
                f_hd,
                f_hn,
                fsize,
                base,
                counters,
            )
            if status < 0:
                return -1, INF, INF, -1
            if status == 1 and b_state[v] == base + 1:
                cw = f_lw[v] + b_lw[v]
                cd = f_ld[v] + b_ld[v]
                if _lt(cw, cd, best_w, best_d):
                    best_w, best_d, meet = cw, cd, v
        else:
            bsize, v, status = settle_next(
                dn_first,
                dn_tail,
                dn_w,
                dn_d,
                nup,
                up_first,
                up_head,
                up_w,
                b_lw,
                b_ld,
                b_state,
                b_parc,
                b_hw,
                b_hd,
                b_hn,
                bsize,
                base,
                counters,
            )
            if status < 0:
                return -1, INF, INF, -1
            if status == 1 and f_state[v] == base + 1:
                cw = f_lw[v] + b_lw[v]
                cd = f_ld[v] + b_ld[v]
                if _lt(cw, cd, best_w, best_d):
                    best_w, best_d, meet = cw, cd, v
    return 0, best_w, best_d, meet


@nb.njit(cache=True, nogil=True)
def _owner(first: np.ndarray, e: int) -> int:
    """The rank r with first[r] <= e < first[r+1]."""
    return np.searchsorted(first, e, side="right") - 1


@nb.njit(cache=True, nogil=True)
def unpack_path(
    meet: int,
    f_parc: np.ndarray,
    b_parc: np.ndarray,
    up_first: np.ndarray,
    up_head: np.ndarray,
    dn_first: np.ndarray,
    dn_tail: np.ndarray,
    unpack_a: np.ndarray,
    unpack_b: np.ndarray,
) -> tuple[np.ndarray, int, int]:
    """Original arc ids of the path through `meet`, plus the source and target seed ranks it starts/ends at."""
    nup = up_head.shape[0]
    chain = np.empty(16, dtype=np.int64)
    k = 0
    v = meet
    while f_parc[v] >= 0:  # forward chain meet -> source, via upward arcs
        g = f_parc[v]
        if k == chain.shape[0]:
            bigger = np.empty(2 * k, dtype=np.int64)
            bigger[:k] = chain
            chain = bigger
        chain[k] = g
        k += 1
        v = _owner(up_first, g)
    src = v
    chain[:k] = chain[:k][::-1].copy()
    v = meet
    while b_parc[v] >= 0:  # backward chain meet -> target, via downward arcs (g - nup into rank owner)
        g = b_parc[v]
        if k == chain.shape[0]:
            bigger = np.empty(2 * k, dtype=np.int64)
            bigger[:k] = chain
            chain = bigger
        chain[k] = g
        k += 1
        v = _owner(dn_first, g - nup)
    dst = v
    out = np.empty(max(2 * k, 16), dtype=np.int32)
    no = 0
    stack = np.empty(64, dtype=np.int64)
    for i in range(k):
        sp = 0
        stack[sp] = chain[i]
        sp += 1
        while sp > 0:
            sp -= 1
            g = stack[sp]
            if unpack_b[g] < 0:
                if no == out.shape[0]:
                    bigger32 = np.empty(2 * no, dtype=np.int32)
                    bigger32[:no] = out
                    out = bigger32
                out[no] = unpack_a[g]
                no += 1
            else:
                if sp + 2 > stack.shape[0]:
                    bigger = np.empty(2 * stack.shape[0], dtype=np.int64)
                    bigger[:sp] = stack[:sp]
                    stack = bigger
                stack[sp] = unpack_b[g]
                stack[sp + 1] = unpack_a[g]
                sp += 2
    return out[:no].copy(), src, dst


def pick_seed(ranks: np.ndarray, weights: np.ndarray, dists: np.ndarray, rank: int) -> int:
    """Index of the seed that starts a label at `rank`: the lexicographic minimum there, first index on ties."""
    idx = np.flatnonzero(ranks == rank)
    if len(idx) == 0:
        return -1
    order = np.lexsort((idx, dists[idx], weights[idx]))
    return int(idx[order[0]])


class _Side:
    """Per-direction search arrays (labels, state, parent CH arc) and a growable lazy heap."""

    def __init__(self, n: int) -> None:
        self.lw = np.zeros(n, dtype=np.int64)
        self.ld = np.zeros(n, dtype=np.int64)
        self.state = np.zeros(n, dtype=np.int32)
        self.parc = np.full(n, -1, dtype=np.int32)
        self.grow(_HEAP_START)

    def grow(self, cap: int) -> None:
        self.hw = np.empty(cap, dtype=np.int64)
        self.hd = np.empty(cap, dtype=np.int64)
        self.hn = np.empty(cap, dtype=np.int32)


def seed_arrays(seeds: Seeds, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ranks int32, weights int64, dists int64) of a seed set."""
    nodes = np.asarray(seeds.nodes, dtype=np.int64)
    return (
        rank[nodes].astype(np.int32),
        np.asarray(seeds.weights, dtype=np.int64),
        np.asarray(seeds.dists, dtype=np.int64),
    )


class CHSearch:
    """One worker's CH query object over a shared graph: `CHSearch(graph).run(sources, targets)`.

    After `run`, `distance` holds the distance (dm, seed distances included) of the returned path, or INF_WEIGHT.
    """

    def __init__(self, graph: object) -> None:
        a = ch_arrays(graph)
        self._a = a
        self._rank = a["ch_rank"]
        self._g = (
            a["ch_up_first"],
            a["ch_up_head"],
            a["ch_up_weight"],
            a["ch_up_dist"],
            a["ch_down_first"],
            a["ch_down_tail"],
            a["ch_down_weight"],
            a["ch_down_dist"],
        )
        n = int(len(self._rank))
        self._f = _Side(n)
        self._b = _Side(n)
        self._cur = 0
        self._counters = np.zeros(2, dtype=np.int64)
        self.distance = INF

    def _next_base(self) -> int:
        self._cur += 1
        if self._cur > _STAMP_MAX:
            for side in (self._f, self._b):
                side.state.fill(0)
            self._cur = 1
        return 3 * self._cur

    def run(self, sources: Seeds, targets: Seeds) -> SearchResult:
        """Best path from any source seed to any target seed (weights ds include the seeds' initial weights)."""
        t0 = time.perf_counter()
        s_r, s_w, s_d = seed_arrays(sources, self._rank)
        t_r, t_w, t_d = seed_arrays(targets, self._rank)
        f, b = self._f, self._b
        self._counters[:] = 0
        while True:
            base = self._next_base()
            status, best_w, best_d, meet = _query(
                *self._g,
                s_r,
                s_w,
                s_d,
                t_r,
                t_w,
                t_d,
                f.lw,
                f.ld,
                f.state,
                f.parc,
                b.lw,
                b.ld,
                b.state,
                b.parc,
                f.hw,
                f.hd,
                f.hn,
                b.hw,
                b.hd,
                b.hn,
                base,
                self._counters,
            )
            if status == 0:
                break
            f.grow(2 * len(f.hw))
            b.grow(2 * len(b.hw))
            self._counters[:] = 0
        stats = SearchStats("ch", settled=int(self._counters[0]), relaxed=int(self._counters[1]))
        if meet < 0:
            self.distance = INF
            stats.micros = (time.perf_counter() - t0) * 1e6
            return SearchResult(INF, np.zeros(0, dtype=np.int32), -1, -1, stats)
        a = self._a
        arcs, src, dst = unpack_path(
            meet,
            f.parc,
            b.parc,
            a["ch_up_first"],
            a["ch_up_head"],
            a["ch_down_first"],
            a["ch_down_tail"],
            a["ch_unpack_a"],
            a["ch_unpack_b"],
        )
        self.distance = int(best_d)
        stats.micros = (time.perf_counter() - t0) * 1e6
        return SearchResult(int(best_w), arcs, pick_seed(s_r, s_w, s_d, src), pick_seed(t_r, t_w, t_d, dst), stats)
