"""Contraction-hierarchy point-to-point queries: bidirectional upward search with stall-on-demand, path unpacking.

The graph's `ch_*` arrays (see `preprocessing.contract`) are read-only and shared; a `CHSearch` owns its per-query
arrays (allocated once, reset by a timestamp, never cleared per query) and serves one thread at a time.

Labels are (weight ds, distance dm) pairs ordered lexicographically, heap ties on the smaller rank, so each direction
is a deterministic function of its seeds. The result is the lexicographic minimum of forward + backward label over
the meeting nodes that both directions settle without stalling; a direction stops once its smallest key is not below
the best candidate. Stalling compares weights only (strictly), so the weight is always Dijkstra's; the distance is
that of the returned path. `CHTable` (app.engine.table) runs the same one-direction kernel over the same candidate
set, so its weights *and* distances equal `CHSearch`'s.

Per direction and node, one int64 row: (weight, dist, state, parent CH arc). `state - 3*cur` is 0 (labelled),
1 (settled) or 2 (stalled); anything smaller means "not reached in this query".
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from .errors import GraphError
from .types import INF_WEIGHT, SearchResult, SearchStats, Seeds

NO_CH_MESSAGE = "graph has no contraction hierarchy: re-run `starroute preprocess` without --no-ch"
INF = int(INF_WEIGHT)
CH_ARRAYS = ("ch_rank", "ch_up_first", "ch_up_arcs", "ch_down_first", "ch_down_arcs", "ch_unpack")
STAMP_MAX = (2**62) // 3  # int64 state: never wraps in practice
HEAP_START = 1024

# label row columns
L_W = 0
L_D = 1
L_ST = 2
L_PARC = 3


def ch_arrays(graph: object) -> dict[str, np.ndarray]:
    """The CH arrays of `graph` as plain ndarrays; raises GraphError when it has none."""
    has = getattr(graph, "has", None)
    if has is None or not all(has(name) for name in CH_ARRAYS):
        raise GraphError(NO_CH_MESSAGE)
    return {name: np.asarray(getattr(graph, name)) for name in CH_ARRAYS}


# --------------------------------------------------------------------------------------------------------------------
# lexicographic lazy heap: rows (weight, dist, node) of an int64 [cap, 3] array, ties on the smaller node


@nb.njit(cache=True, nogil=True)
def _lt(w1: int, d1: int, w2: int, d2: int) -> bool:
    return w1 < w2 or (w1 == w2 and d1 < d2)


@nb.njit(cache=True, nogil=True)
def hpush(h: np.ndarray, size: int, w: int, d: int, node: int) -> int:
    """Insert (w, d, node); returns the new size (the caller checks capacity)."""
    i = size
    while i > 0:  # sift the hole up; comparisons written out (inlined helpers are slower in numba)
        p = (i - 1) >> 1
        pw = h[p, 0]
        pd = h[p, 1]
        if w < pw or (w == pw and (d < pd or (d == pd and node < h[p, 2]))):
            h[i, 0] = pw
            h[i, 1] = pd
            h[i, 2] = h[p, 2]
            i = p
        else:
            break
    h[i, 0] = w
    h[i, 1] = d
    h[i, 2] = node
    return size + 1


@nb.njit(cache=True, nogil=True)
def hpop(h: np.ndarray, size: int) -> tuple[int, int, int, int]:
    """Remove the minimum; returns (w, d, node, new size)."""
    top_w = h[0, 0]
    top_d = h[0, 1]
    top_n = h[0, 2]
    size -= 1
    if size > 0:
        w = h[size, 0]
        d = h[size, 1]
        node = h[size, 2]
        i = 0
        while True:  # sift the hole down
            c = 2 * i + 1
            if c >= size:
                break
            cw = h[c, 0]
            cd = h[c, 1]
            cn = h[c, 2]
            if c + 1 < size:
                rw = h[c + 1, 0]
                rd = h[c + 1, 1]
                rn = h[c + 1, 2]
                if rw < cw or (rw == cw and (rd < cd or (rd == cd and rn < cn))):
                    c += 1
                    cw = rw
                    cd = rd
                    cn = rn
            if cw < w or (cw == w and (cd < d or (cd == d and cn < node))):
                h[i, 0] = cw
                h[i, 1] = cd
                h[i, 2] = cn
                i = c
            else:
                break
        h[i, 0] = w
        h[i, 1] = d
        h[i, 2] = node
    return top_w, top_d, top_n, size


# --------------------------------------------------------------------------------------------------------------------
# one search direction


@nb.njit(cache=True, nogil=True)
def init_seeds(
    rank: np.ndarray, nodes: np.ndarray, sw: np.ndarray, sd: np.ndarray, lab: np.ndarray, h: np.ndarray, base: int
) -> int:
    """Label the seeds (node ids, mapped to ranks): lexicographic minimum per node, first index on ties.

    Returns the heap size, -1 when the heap is full, -2 when a node id is out of range.
    """
    size = 0
    n = rank.shape[0]
    for i in range(nodes.shape[0]):
        if nodes[i] < 0 or nodes[i] >= n:
            return -2
        v = rank[nodes[i]]
        w = sw[i]
        d = sd[i]
        if w >= INF:
            continue
        if lab[v, L_ST] < base or _lt(w, d, lab[v, L_W], lab[v, L_D]):
            lab[v, L_ST] = base
            lab[v, L_W] = w
            lab[v, L_D] = d
            lab[v, L_PARC] = -1
            if size == h.shape[0]:
                return -1
            size = hpush(h, size, w, d, v)
    return size


@nb.njit(cache=True, nogil=True)
def settle_next(
    g_first: np.ndarray,
    g_arcs: np.ndarray,
    arc_base: int,
    s_first: np.ndarray,
    s_arcs: np.ndarray,
    lab: np.ndarray,
    h: np.ndarray,
    size: int,
    base: int,
    counters: np.ndarray,
) -> tuple[int, int, int]:
    """Settle the next node of one direction: (new heap size, node, status).

    status 1 = settled and relaxed along the search graph `g_*`; 2 = stalled (a labelled higher node reaches it
    strictly cheaper along the stall graph `s_*`); 0 = heap exhausted; -1 = heap full (grow it and rerun the query).
    The label of a node reached through search-graph arc `e` records the CH arc id `arc_base + e`.
    counters[0] += settled nodes, counters[1] += relaxed arcs.
    """
    cap = h.shape[0]
    while size > 0:
        w, d, v, size = hpop(h, size)
        if lab[v, L_ST] != base or w != lab[v, L_W] or d != lab[v, L_D]:
            continue
        counters[0] += 1
        for e in range(s_first[v], s_first[v + 1]):
            x = s_arcs[e, 0]
            if lab[x, L_ST] >= base and lab[x, L_W] + s_arcs[e, 1] < w:
                lab[v, L_ST] = base + 2
                return size, v, 2
        lab[v, L_ST] = base + 1
        lo = g_first[v]
        hi = g_first[v + 1]
        counters[1] += hi - lo
        for e in range(lo, hi):
            x = g_arcs[e, 0]
            sx = lab[x, L_ST]
            if sx > base:
                continue
            nw = w + g_arcs[e, 1]
            nd = d + g_arcs[e, 2]
            if sx < base or _lt(nw, nd, lab[x, L_W], lab[x, L_D]):
                if size == cap:
                    return size, v, -1
                lab[x, L_ST] = base
                lab[x, L_W] = nw
                lab[x, L_D] = nd
                lab[x, L_PARC] = arc_base + e
                size = hpush(h, size, nw, nd, x)
        return size, v, 1
    return size, -1, 0


# --------------------------------------------------------------------------------------------------------------------
# bidirectional query and unpacking


@nb.njit(cache=True, nogil=True)
def _owner(first: np.ndarray, e: int) -> int:
    """The rank r with first[r] <= e < first[r+1]."""
    return np.searchsorted(first, e, side="right") - 1


@nb.njit(cache=True, nogil=True)
def _pick_seed(rank: np.ndarray, nodes: np.ndarray, sw: np.ndarray, sd: np.ndarray, r: int) -> int:
    """The seed whose label starts at rank `r` (lexicographic minimum there, first index on ties; as init_seeds)."""
    best = -1
    for i in range(nodes.shape[0]):
        if rank[nodes[i]] == r and sw[i] < INF:
            if best < 0 or _lt(sw[i], sd[i], sw[best], sd[best]):
                best = i
    return best


@nb.njit(cache=True, nogil=True)
def unpack_path(
    meet: int,
    f_lab: np.ndarray,
    b_lab: np.ndarray,
    up_first: np.ndarray,
    down_first: np.ndarray,
    unpack: np.ndarray,
) -> tuple[np.ndarray, int, int]:
    """(original arc ids of the path through `meet`, source rank, target rank) from the two parent chains."""
    nup = up_first[up_first.shape[0] - 1]
    chain = np.empty(64, dtype=np.int64)
    k = 0
    v = meet
    while f_lab[v, L_PARC] >= 0:  # meet -> source along upward arcs, reversed below
        g = f_lab[v, L_PARC]
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
    while b_lab[v, L_PARC] >= 0:  # meet -> target along downward arcs
        g = b_lab[v, L_PARC]
        if k == chain.shape[0]:
            bigger = np.empty(2 * k, dtype=np.int64)
            bigger[:k] = chain
            chain = bigger
        chain[k] = g
        k += 1
        v = _owner(down_first, g - nup)
    dst = v
    out = np.empty(max(4 * k, 64), dtype=np.int32)
    no = 0
    stack = np.empty(64, dtype=np.int64)
    for i in range(k):
        stack[0] = chain[i]
        sp = 1
        while sp > 0:
            sp -= 1
            g = stack[sp]
            if unpack[g, 1] < 0:
                if no == out.shape[0]:
                    bigger32 = np.empty(2 * no, dtype=np.int32)
                    bigger32[:no] = out
                    out = bigger32
                out[no] = unpack[g, 0]
                no += 1
            else:
                if sp + 2 > stack.shape[0]:
                    bigger = np.empty(2 * stack.shape[0], dtype=np.int64)
                    bigger[:sp] = stack[:sp]
                    stack = bigger
                stack[sp] = unpack[g, 1]
                stack[sp + 1] = unpack[g, 0]
                sp += 2
    return out[:no].copy(), src, dst


@nb.njit(cache=True, nogil=True)
def _run(
    rank: np.ndarray,
    up_first: np.ndarray,
    up_arcs: np.ndarray,
    down_first: np.ndarray,
    down_arcs: np.ndarray,
    unpack: np.ndarray,
    s_nodes: np.ndarray,
    s_w: np.ndarray,
    s_d: np.ndarray,
    t_nodes: np.ndarray,
    t_w: np.ndarray,
    t_d: np.ndarray,
    f_lab: np.ndarray,
    b_lab: np.ndarray,
    f_heap: np.ndarray,
    b_heap: np.ndarray,
    base: int,
    counters: np.ndarray,
) -> tuple[int, int, int, np.ndarray, int, int]:
    """(status, weight, dist, arcs, source seed, target seed); status -1 = a heap is full, -2 = bad seed node."""
    nup = up_arcs.shape[0]
    none = np.zeros(0, dtype=np.int32)
    fsize = init_seeds(rank, s_nodes, s_w, s_d, f_lab, f_heap, base)
    bsize = init_seeds(rank, t_nodes, t_w, t_d, b_lab, b_heap, base)
    if fsize < 0 or bsize < 0:
        return min(fsize, bsize), INF, INF, none, -1, -1
    best_w = INF
    best_d = INF
    meet = -1
    f_on = True
    b_on = True
    while True:
        if f_on and (fsize == 0 or not _lt(f_heap[0, 0], f_heap[0, 1], best_w, best_d)):
            f_on = False
        if b_on and (bsize == 0 or not _lt(b_heap[0, 0], b_heap[0, 1], best_w, best_d)):
            b_on = False
        if not f_on and not b_on:
            break
        if f_on and (not b_on or not _lt(b_heap[0, 0], b_heap[0, 1], f_heap[0, 0], f_heap[0, 1])):
            fsize, v, status = settle_next(
                up_first, up_arcs, 0, down_first, down_arcs, f_lab, f_heap, fsize, base, counters
            )
            other = b_lab
        else:
            bsize, v, status = settle_next(
                down_first, down_arcs, nup, up_first, up_arcs, b_lab, b_heap, bsize, base, counters
            )
            other = f_lab
        if status < 0:
            return -1, INF, INF, none, -1, -1
        if status == 1 and other[v, L_ST] == base + 1:
            cw = f_lab[v, L_W] + b_lab[v, L_W]
            cd = f_lab[v, L_D] + b_lab[v, L_D]
            if _lt(cw, cd, best_w, best_d):
                best_w = cw
                best_d = cd
                meet = v
    if meet < 0:
        return 0, INF, INF, none, -1, -1
    arcs, src, dst = unpack_path(meet, f_lab, b_lab, up_first, down_first, unpack)
    return 0, best_w, best_d, arcs, _pick_seed(rank, s_nodes, s_w, s_d, src), _pick_seed(rank, t_nodes, t_w, t_d, dst)


# --------------------------------------------------------------------------------------------------------------------


def new_labels(n: int) -> np.ndarray:
    """Per-node label rows of one direction (weight, dist, state, parent CH arc)."""
    return np.zeros((n, 4), dtype=np.int64)


def new_heap(cap: int = HEAP_START) -> np.ndarray:
    return np.empty((cap, 3), dtype=np.int64)


def seed_arrays(seeds: Seeds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nodes int32, weights int64, dists int64) of a seed set, converted only when needed."""
    nodes, w, d = seeds.nodes, seeds.weights, seeds.dists
    if not (isinstance(nodes, np.ndarray) and nodes.dtype == np.int32):
        nodes = np.asarray(nodes, dtype=np.int32)
    if not (isinstance(w, np.ndarray) and w.dtype == np.int64):
        w = np.asarray(w, dtype=np.int64)
    if not (isinstance(d, np.ndarray) and d.dtype == np.int64):
        d = np.asarray(d, dtype=np.int64)
    return nodes, w, d


class CHSearch:
    """One worker's CH query object over a shared graph: `CHSearch(graph).run(sources, targets)`.

    After `run`, `distance` holds the distance (dm, seed distances included) of the returned path, or INF_WEIGHT.
    """

    def __init__(self, graph: object) -> None:
        a = ch_arrays(graph)
        self._g = (
            a["ch_rank"],
            a["ch_up_first"],
            a["ch_up_arcs"],
            a["ch_down_first"],
            a["ch_down_arcs"],
            a["ch_unpack"],
        )
        n = int(len(a["ch_rank"]))
        self._f_lab = new_labels(n)
        self._b_lab = new_labels(n)
        self._f_heap = new_heap()
        self._b_heap = new_heap()
        self._cur = 0
        self._counters = np.zeros(2, dtype=np.int64)
        self.distance = INF

    def run(self, sources: Seeds, targets: Seeds) -> SearchResult:
        """Best path from any source seed to any target seed (weights ds include the seeds' initial weights)."""
        t0 = time.perf_counter()
        s_n, s_w, s_d = seed_arrays(sources)
        t_n, t_w, t_d = seed_arrays(targets)
        counters = self._counters
        while True:
            self._cur += 1
            counters[:] = 0
            status, w, d, arcs, si, ti = _run(
                *self._g,
                s_n,
                s_w,
                s_d,
                t_n,
                t_w,
                t_d,
                self._f_lab,
                self._b_lab,
                self._f_heap,
                self._b_heap,
                3 * self._cur,
                counters,
            )
            if status == 0:
                break
            if status == -2:
                raise ValueError("seed node id out of range")
            self._f_heap = new_heap(2 * len(self._f_heap))
            self._b_heap = new_heap(2 * len(self._b_heap))
        self.distance = int(d)
        stats = SearchStats("ch", int(counters[0]), int(counters[1]), (time.perf_counter() - t0) * 1e6)
        return SearchResult(int(w), arcs, int(si), int(ti), stats)
