"""The customizable contraction hierarchy's metric-independent half: a nested-dissection order of the search graph
and its chordal supergraph (Dibbelt, Strasser, Wagner; RoutingKit's `CustomizableContractionHierarchy`).

    search graph -> undirected, no loops or parallels -> nested dissection (METIS NodeND) -> rank
                 -> chordal supergraph in rank order (the elimination game) -> `cch_first` / `cch_head` / `cch_arc_of`

The order puts separators last: contracting nodes in rank order only ever connects a node's higher neighbours, and
the arcs that adds (the "fill") are the CCH arcs, whatever the weights. A CCH arc is undirected, stored once under
its lower rank `x` with its higher rank `y` (`cch_head`, ascending within `x`); a metric gives it two weights,
x -> y ("up") and y -> x ("down"). `cch_arc_of[e]` is the CCH arc of search arc e (-1 for a self-loop); its direction
is up when the tail's rank is the lower one. The customization (`floor.kernels.cch_customize`) turns a metric into
weights over these arcs; the queries run on its output as on any hierarchy (`app.engine.search.ch`).

Everything here depends on the graph's shape only: it is built once at `preprocess`; a new metric never rebuilds it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from floor.kernels.jit import I32, I64, NONE, arr, kernel, tup

ORDERS = ("metis", "kahip")  # nested-dissection orderers (bench/cch.py measures both); METIS is the default
KAHIP_LEAF = 64  # the recursive bisection stops at pieces this small (ordered by id inside)


def undirected(n: int, tail: np.ndarray, head: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR (xadj int64 [n+1], adjncy int32, ascending per row) of the symmetric simple graph under the arcs (no
    loops, no parallels). Built in place in int32 (`_undirected`): the int64 pair keys np.unique sorted took some
    50 bytes per arc, at the contraction's peak when the order is built beside it."""
    return _undirected(int(n), np.ascontiguousarray(tail, dtype=np.int32), np.ascontiguousarray(head, dtype=np.int32))


def metis_order(n: int, xadj: np.ndarray, adjncy: np.ndarray) -> np.ndarray:
    """Rank (int32 [n]) of each node in METIS's nested-dissection fill-reducing order (separators last)."""
    import pymetis

    if n == 0:
        return np.zeros(0, dtype=np.int32)
    if len(adjncy) == 0:
        return np.arange(n, dtype=np.int32)
    _perm, iperm = pymetis.nested_dissection(adjacency=pymetis.CSRAdjacency(xadj, adjncy))
    return np.asarray(iperm, dtype=np.int32)


def kahip_order(n: int, xadj: np.ndarray, adjncy: np.ndarray, seed: int = 0) -> np.ndarray:
    """Rank (int32 [n]) by recursive bisection with KaHIP's `kaffpa` (2 blocks, 3 % imbalance, "strong"): each cut's
    endpoints on the smaller side form the separator, ranked above both halves; pieces up to `KAHIP_LEAF` nodes
    (and disconnected leftovers) are ranked by id. Python recursion over KaHIP calls: for measurement."""
    import kahip

    rank = np.empty(n, dtype=np.int32)
    xadj64 = np.asarray(xadj, dtype=np.int64)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(xadj64))
    dst = np.asarray(adjncy, dtype=np.int64)
    top = n  # ranks are handed out from the top: separators first, leaves last
    stack = [np.arange(n, dtype=np.int64)]
    local = np.full(n, -1, dtype=np.int64)
    while stack:
        nodes = stack.pop()
        k = len(nodes)
        if k <= KAHIP_LEAF:
            rank[nodes] = np.arange(top - k, top, dtype=np.int32)
            top -= k
            continue
        local[nodes] = np.arange(k)
        sel = (local[src] >= 0) & (local[dst] >= 0) & np.isin(src, nodes)
        s, d = local[src[sel]], local[dst[sel]]
        order = np.argsort(s, kind="stable")
        s, d = s[order], d[order]
        sub_xadj = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(np.bincount(s, minlength=k), out=sub_xadj[1:])
        ones = np.ones(k, dtype=np.int64)
        _cut, part = kahip.kaffpa(ones.tolist(), sub_xadj.tolist(), [], d.tolist(), 2, 0.03, True, seed, kahip.STRONG)
        part = np.asarray(part, dtype=np.int64)
        local[nodes] = -1
        cut = part[s] != part[d]
        side = 0 if np.count_nonzero(part == 0) <= np.count_nonzero(part == 1) else 1
        sep = np.zeros(k, dtype=bool)
        sep[s[cut & (part[s] == side)]] = True
        ns = int(np.count_nonzero(sep))
        if ns == 0 or ns == k:  # no cut (disconnected halves or one piece): rank the halves apart, or give up
            halves = [nodes[part == 0], nodes[part == 1]]
            if min(len(h) for h in halves) == 0:
                rank[nodes] = np.arange(top - k, top, dtype=np.int32)
                top -= k
                continue
            stack.extend(halves)
            continue
        rank[nodes[sep]] = np.arange(top - ns, top, dtype=np.int32)
        top -= ns
        stack.append(nodes[~sep & (part == 0)])
        stack.append(nodes[~sep & (part == 1)])
    assert top == 0, "every node gets exactly one rank"
    return rank


_VI32, _VI64, _RI32 = arr(I32), arr(I64), arr(I32, readonly=True)


@kernel(NONE(_VI32, I64, I64), nrt=False)
def _heapsort(a, lo, hi):  # pragma: no cover - numba
    """Sort a[lo:hi] ascending in place. Written out: numba's `np.sort` and slice assignment cost about 3 s of
    compile time on a first start, more than the rest of this module."""
    n = hi - lo
    for start in range(n // 2 - 1, -1, -1):
        _sift_down(a, lo, start, n)
    for end in range(n - 1, 0, -1):
        t = a[lo]
        a[lo] = a[lo + end]
        a[lo + end] = t
        _sift_down(a, lo, 0, end)


@kernel(NONE(_VI32, I64, I64, I64), nrt=False)
def _sift_down(a, lo, i, n):  # pragma: no cover - numba
    """Move a[lo + i] down the max-heap a[lo:lo + n] to its place."""
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and a[lo + c + 1] > a[lo + c]:
            c += 1
        if a[lo + i] >= a[lo + c]:
            return
        t = a[lo + i]
        a[lo + i] = a[lo + c]
        a[lo + c] = t
        i = c


@kernel(tup(_VI64, _VI32)(I64, _RI32, _RI32))
def _undirected(n, tail, head):  # pragma: no cover - numba
    """`undirected`: both directions of each non-loop arc counted into rows, placed, then each row sorted and its
    repeats dropped, compacted in place (a row is read before any later row is written over)."""
    bound = np.zeros(n + 1, dtype=np.int64)
    for e in range(tail.shape[0]):
        if tail[e] != head[e]:
            bound[tail[e] + 1] += 1
            bound[head[e] + 1] += 1
    for v in range(n):
        bound[v + 1] += bound[v]
    fill = bound[:n].copy()
    adj = np.empty(bound[n], dtype=np.int32)
    for e in range(tail.shape[0]):
        t, h = tail[e], head[e]
        if t != h:
            adj[fill[t]] = h
            fill[t] += 1
            adj[fill[h]] = t
            fill[h] += 1
    xadj = np.zeros(n + 1, dtype=np.int64)
    pos = 0
    for v in range(n):
        _heapsort(adj, bound[v], bound[v + 1])
        last = -1
        for i in range(bound[v], bound[v + 1]):
            y = adj[i]
            if y != last:
                adj[pos] = y
                pos += 1
                last = y
        xadj[v + 1] = pos
    return xadj, adj[:pos].copy()


@kernel(tup(_VI32, _VI32, _VI32, I64)(I64, _VI64, _VI32, _VI32))
def _chordal(n, xadj, adjncy, rank):  # pragma: no cover - numba
    """The elimination game in rank order: (first int32 [n+1], head int32 [A] ascending per row, parent int32 [n]
    (the elimination tree, -1 at roots), max upward degree). A node's upward neighbours are its own higher
    neighbours plus those of each child in the elimination tree (children are lower, hence already done)."""
    order = np.empty(n, dtype=np.int64)
    for v in range(n):
        order[rank[v]] = v
    cap = max(2 * adjncy.shape[0], 16)
    head = np.empty(cap, dtype=np.int32)
    first = np.zeros(n + 1, dtype=np.int32)
    parent = np.full(n, -1, dtype=np.int32)
    child = np.full(n, -1, dtype=np.int32)  # first child, then next sibling
    sibling = np.full(n, -1, dtype=np.int32)
    mark = np.full(n, -1, dtype=np.int64)
    buf = np.empty(max(n, 1), dtype=np.int32)
    max_deg = 0
    pos = 0
    for r in range(n):
        v = order[r]
        k = 0
        mark[r] = r
        for e in range(xadj[v], xadj[v + 1]):
            y = rank[adjncy[e]]
            if y > r and mark[y] != r:
                mark[y] = r
                buf[k] = y
                k += 1
        c = child[r]
        while c >= 0:
            for e in range(first[c], first[c + 1]):
                y = head[e]
                if mark[y] != r:
                    mark[y] = r
                    buf[k] = y
                    k += 1
            c = sibling[c]
        if pos + k > cap:
            cap = max(2 * cap, pos + k)
            grown = np.empty(cap, dtype=np.int32)
            for i in range(pos):
                grown[i] = head[i]
            head = grown
        for i in range(k):
            head[pos + i] = buf[i]
        _heapsort(head, pos, pos + k)
        if k > 0:  # the lowest upward neighbour: the parent in the elimination tree
            p = head[pos]
            parent[r] = p
            sibling[r] = child[p]
            child[p] = r
        pos += k
        first[r + 1] = pos
        if k > max_deg:
            max_deg = k
    return first, head[:pos].copy(), parent, max_deg


def chordal_supergraph(
    n: int, xadj: np.ndarray, adjncy: np.ndarray, rank: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(cch_first, cch_head, elimination-tree parent by rank, max upward degree) of the graph contracted in rank
    order (`_chordal`)."""
    return _chordal(
        int(n),
        np.ascontiguousarray(xadj, dtype=np.int64),
        np.ascontiguousarray(adjncy, dtype=np.int32),
        np.ascontiguousarray(rank, dtype=np.int32),
    )


def tree_depth(parent: np.ndarray) -> int:
    """The elimination tree's height in nodes (an upper bound on any CCH query's search space per direction)."""
    n = len(parent)
    depth = np.ones(n, dtype=np.int64)
    for r in range(n - 1, -1, -1):  # parents are higher ranks: done before their children
        p = parent[r]
        if p >= 0:
            depth[r] = depth[p] + 1
    return int(depth.max()) if n else 0


def arc_of(first: np.ndarray, head: np.ndarray, rank: np.ndarray, tail: np.ndarray, arc_head: np.ndarray) -> np.ndarray:
    """int32 [T]: the CCH arc of each search arc (-1 for a self-loop), found by binary search in its lower rank's
    sorted row (row offset + position of the higher rank)."""
    rt = np.asarray(rank, dtype=np.int64)[np.asarray(tail, dtype=np.int64)]
    rh = np.asarray(rank, dtype=np.int64)[np.asarray(arc_head, dtype=np.int64)]
    lo, hi = np.minimum(rt, rh), np.maximum(rt, rh)
    n = len(first) - 1
    key_all = np.repeat(np.arange(n, dtype=np.int64), np.diff(first)) * n + np.asarray(head, dtype=np.int64)
    pos = np.searchsorted(key_all, lo * n + hi)  # rows are sorted by (lower, higher): one global search
    out = pos.astype(np.int32)
    out[rt == rh] = -1
    ok = rt != rh
    assert np.array_equal(key_all[pos[ok]], (lo * n + hi)[ok]), "every search arc is a CCH arc"
    return out


def build_cch(graph: Any, order: str = "metis") -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The metric-independent CCH of `graph` (the search graph): (`cch_*` arrays, metadata with timings, arc count,
    max upward degree and elimination-tree depth). `order`: "metis" (default) or "kahip" (`ORDERS`)."""
    assert order in ORDERS, f"order must be one of {ORDERS}"
    seconds: dict[str, float] = {}
    n = graph.num_nodes
    t0 = time.perf_counter()
    xadj, adjncy = undirected(n, graph.arc_tail, graph.arc_head)
    rank = metis_order(n, xadj, adjncy) if order == "metis" else kahip_order(n, xadj, adjncy)
    seconds["order"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    first, head, parent, max_deg = chordal_supergraph(n, xadj, adjncy, rank)
    seconds["contract"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    arcs = {
        "cch_rank": rank,
        "cch_first": first,
        "cch_head": head,
        "cch_arc_of": arc_of(first, head, rank, graph.arc_tail, graph.arc_head),
    }
    depth = tree_depth(parent)
    seconds["finalize"] = time.perf_counter() - t0
    meta: dict[str, Any] = {
        "order": order,
        "nodes": n,
        "arcs": int(len(head)),
        "input_edges": int(len(adjncy) // 2),
        "max_up_degree": int(max_deg),
        "tree_depth": depth,
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
    }
    return arcs, meta
