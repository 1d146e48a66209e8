"""ALT landmarks: choose landmarks on the largest SCC and store exact distances to and from each of them.

Arrays written (k landmarks, n nodes):

- `lm_nodes` int32 [k]: the landmark node ids, in selection order.
- `lm_from` uint32 [n, k]: `lm_from[v, L] = d(lm_nodes[L], v)`, the weight (ds) from landmark L to v.
- `lm_to` uint32 [n, k]: `lm_to[v, L] = d(v, lm_nodes[L])`, the weight (ds) from v to landmark L.

Both tables are node-major, so one node's row (16 landmarks x 4 bytes) is one 64-byte cache line. Distances are
stored exactly (scale factor 1, recorded in the metadata): a bidirectional search with average potentials needs
*consistent* bounds, and rounding table entries, even towards a lower bound, breaks consistency on short arcs.
`0xFFFFFFFF` (`LM_NONE`) marks an unreachable pair and yields no bound; a finite distance that does not fit
(>= 2**32 - 1 ds, 13 years) is an error.

Selection (`method`): "avoid" (Goldberg & Werneck): grow a shortest-path tree from a random root in the largest SCC,
weight each node by how badly the current landmarks bound its distance from the root (d - lower bound), sum the
weights over subtrees (zero for subtrees holding a landmark) and walk down from the heaviest subtree along heaviest
children to a leaf, the new landmark. "farthest": each new landmark maximises the smallest round-trip weight
d(L, v) + d(v, L) to the landmarks chosen so far. Both restrict candidates to `node_component == 0` and are
deterministic for a given `seed`.

Virtual end points (seeds): the engine derives the landmark distance of a virtual target T reached from seed
nodes t_j at extra weight tw_j as `d(L, T) = min_j (lm_from[t_j, L] + tw_j)` and, for the other direction, uses the
constant `max_j (lm_to[t_j, L] - tw_j)`, which keeps the bound consistent on the virtual arcs; docs/DESIGN.md
(Landmarks) gives the derivation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from floor.format.graph import Graph
from floor.format.units import INF_WEIGHT, LM_NONE
from floor.kernels.heap import heap_pop, heap_push
from floor.kernels.jit import kernel


@kernel
def one_to_all(first, arc_of, other, weight, forward, source, dist, parent, order):  # pragma: no cover - numba
    """Dijkstra from `source` over the forward (arcs `first[u]:first[u+1]`, heads `other`) or backward CSR
    (`arc_of[i]` arc ids, tails `other`). Fills dist (int64, INF_WEIGHT unreachable), parent node (-1) and the settle
    order; returns the number of settled nodes."""
    n = dist.shape[0]
    for v in range(n):
        dist[v] = INF_WEIGHT
        parent[v] = -1
    m = weight.shape[0]
    keys = np.empty(m + 1, dtype=np.int64)
    nodes = np.empty(m + 1, dtype=np.int32)
    done = np.zeros(n, dtype=np.uint8)
    dist[source] = 0
    size = heap_push(keys, nodes, 0, np.int64(0), source)
    k = 0
    while size > 0:
        d, u, size = heap_pop(keys, nodes, size)
        if done[u]:
            continue
        done[u] = 1
        order[k] = u
        k += 1
        for i in range(first[u], first[u + 1]):
            a = i if forward else arc_of[i]
            x = other[a]
            nd = d + weight[a]
            if nd < dist[x]:
                dist[x] = nd
                parent[x] = u
                size = heap_push(keys, nodes, size, nd, x)
    return k


@kernel
def _store(dist, table, col):  # pragma: no cover - numba
    """Write int64 distances into column `col` of a uint32 table; returns False when one does not fit."""
    for v in range(dist.shape[0]):
        d = dist[v]
        if d >= INF_WEIGHT:
            table[v, col] = LM_NONE
        elif d >= np.int64(LM_NONE):
            return False
        else:
            table[v, col] = np.uint32(d)
    return True


@kernel
def _avoid_pick(root, dist, parent, order, nsettled, lm_from, lm_to, k, in_main, is_lm):  # pragma: no cover
    """The avoid method's next landmark from the shortest-path tree of `root` (module docstring); -1 if none."""
    n = dist.shape[0]
    size = np.zeros(n, dtype=np.float64)
    blocked = np.zeros(n, dtype=np.uint8)
    best_child = np.full(n, -1, dtype=np.int32)
    for t in range(nsettled - 1, -1, -1):
        v = order[t]
        if is_lm[v]:
            blocked[v] = 1
        if blocked[v]:
            size[v] = 0.0
        elif in_main[v]:
            lb = 0
            for L in range(k):
                f_r = lm_from[root, L]
                f_v = lm_from[v, L]
                if f_r != LM_NONE and f_v != LM_NONE:
                    b = np.int64(f_v) - np.int64(f_r)
                    if b > lb:
                        lb = b
                t_r = lm_to[root, L]
                t_v = lm_to[v, L]
                if t_r != LM_NONE and t_v != LM_NONE:
                    b = np.int64(t_r) - np.int64(t_v)
                    if b > lb:
                        lb = b
            size[v] += float(dist[v] - lb)
        p = parent[v]
        if p >= 0:
            if blocked[v]:
                blocked[p] = 1
            elif in_main[v] and (best_child[p] < 0 or size[v] > size[best_child[p]]):
                best_child[p] = v
            size[p] += size[v]
    best = -1
    for t in range(nsettled):
        v = order[t]
        if in_main[v] and not blocked[v] and size[v] > 0 and (best < 0 or size[v] > size[best]):
            best = v
    if best < 0:
        return -1
    while best_child[best] >= 0 and size[best_child[best]] > 0:
        best = best_child[best]
    return best


def build_landmarks(
    graph: Graph,
    count: int = 16,
    progress: Callable[[int, int], None] | None = None,
    method: str = "avoid",
    seed: int = 0,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Choose `count` landmarks on the largest SCC and compute the `lm_*` tables (module docstring).

    Returns (arrays, metadata) with metadata {count, method, seconds, bytes, dtype, scale, sentinel, seed}.
    `progress(done, total)` is called after each landmark. Fewer landmarks result when the largest SCC is smaller.

    >>> arrays, meta = build_landmarks(graph, count=16)  # doctest: +SKIP
    """
    assert method in ("avoid", "farthest"), f"unknown landmark method {method!r} (avoid, farthest)"
    t0 = time.perf_counter()
    n = graph.num_nodes
    first_out = np.asarray(graph.first_out)
    in_first_out = np.asarray(graph.in_first_out)
    in_arc = np.asarray(graph.in_arc)
    arc_head = np.asarray(graph.arc_head)
    arc_tail = np.asarray(graph.arc_tail)
    weight = np.asarray(graph.arc_weight)
    in_main = np.asarray(graph.node_component) == 0
    main_nodes = np.flatnonzero(in_main)
    k = int(min(max(count, 0), len(main_nodes)))
    lm_from = np.empty((n, k), dtype=np.uint32)
    lm_to = np.empty((n, k), dtype=np.uint32)
    lm_nodes = np.empty(k, dtype=np.int32)
    rng = np.random.default_rng(seed)
    dist = np.empty(n, dtype=np.int64)
    dist2 = np.empty(n, dtype=np.int64)
    parent = np.empty(n, dtype=np.int32)
    order = np.empty(n, dtype=np.int32)
    is_lm = np.zeros(n, dtype=np.uint8)
    roundtrip = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)

    csr = (first_out, in_first_out, in_arc, arc_head, arc_tail, weight)

    def tables(node: int, col: int) -> None:
        _columns(csr, node, col, lm_from, lm_to, dist, dist2, parent, order)
        if method == "farthest":
            np.minimum(roundtrip, dist + dist2, out=roundtrip)

    for i in range(k):
        if method == "farthest":
            if i == 0:
                root = int(main_nodes[rng.integers(len(main_nodes))])
                one_to_all(first_out, in_arc, arc_head, weight, True, root, dist, parent, order)
                one_to_all(in_first_out, in_arc, arc_tail, weight, False, root, dist2, parent, order)
                score = np.where(in_main, dist + dist2, -1)
            else:
                score = np.where(in_main & (is_lm == 0), roundtrip, -1)
            node = int(np.argmax(score))
        else:
            node = -1
            for _ in range(8):  # a root whose tree holds no unbounded weight is retried with another root
                root = int(main_nodes[rng.integers(len(main_nodes))])
                settled = one_to_all(first_out, in_arc, arc_head, weight, True, root, dist, parent, order)
                node = int(_avoid_pick(root, dist, parent, order, settled, lm_from, lm_to, i, in_main, is_lm))
                if node >= 0:
                    break
            if node < 0:  # every candidate is bounded perfectly: any node not yet a landmark will do
                node = int(main_nodes[np.flatnonzero(is_lm[main_nodes] == 0)[0]])
        lm_nodes[i] = node
        is_lm[node] = 1
        tables(node, i)
        if progress is not None:
            progress(i + 1, k)
    arrays = {"lm_nodes": lm_nodes, "lm_from": lm_from, "lm_to": lm_to}
    meta = {
        "count": k,
        "method": method,
        "seed": seed,
        "seconds": round(time.perf_counter() - t0, 3),
        "bytes": int(sum(a.nbytes for a in arrays.values())),
        "dtype": "uint32",
        "scale": 1,
        "sentinel": int(LM_NONE),
        "layout": "node-major [n, k]",
    }
    return arrays, meta


def _columns(
    csr: tuple[np.ndarray, ...],
    node: int,
    col: int,
    lm_from: np.ndarray,
    lm_to: np.ndarray,
    dist: np.ndarray,
    dist2: np.ndarray,
    parent: np.ndarray,
    order: np.ndarray,
) -> None:
    """Column `col` of both tables: a Dijkstra from and one to `node` over `csr` = (first_out, in_first_out,
    in_arc, arc_head, arc_tail, weight); `dist`/`dist2` keep the two distance arrays."""
    first_out, in_first_out, in_arc, arc_head, arc_tail, weight = csr
    one_to_all(first_out, in_arc, arc_head, weight, True, node, dist, parent, order)
    one_to_all(in_first_out, in_arc, arc_tail, weight, False, node, dist2, parent, order)
    _store_columns(dist, dist2, lm_from, lm_to, col)


def _store_columns(dist: np.ndarray, dist2: np.ndarray, lm_from: np.ndarray, lm_to: np.ndarray, col: int) -> None:
    if not (_store(dist, lm_from, col) and _store(dist2, lm_to, col)):
        raise ValueError("a landmark distance exceeds 2**32 - 1 ds: weights too large for the landmark table")


def landmark_tables(graph: Graph, nodes: np.ndarray) -> dict[str, np.ndarray]:
    """The `lm_from`/`lm_to` tables of the landmarks `nodes` on `graph`'s current weights: what a new metric needs
    once any arc got lighter (bounds from the old weights would no longer be lower bounds)."""
    n, k = graph.num_nodes, len(nodes)
    names = ("first_out", "in_first_out", "in_arc", "arc_head", "arc_tail", "arc_weight")
    csr = tuple(np.asarray(getattr(graph, a)) for a in names)
    lm_from = np.empty((n, k), dtype=np.uint32)
    lm_to = np.empty((n, k), dtype=np.uint32)
    dist, dist2 = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    parent = np.empty(n, dtype=np.int32)
    order = np.empty(n, dtype=np.int32)
    for col, node in enumerate(np.asarray(nodes, dtype=np.int64)):
        _columns(csr, int(node), col, lm_from, lm_to, dist, dist2, parent, order)
    return {"lm_from": lm_from, "lm_to": lm_to}


@kernel
def _phast(up_first, up_arcs, down_first, down_arcs, src, forward, dist):  # pragma: no cover - numba
    """Exact weights from (`forward`) or to rank `src` for every rank, by two linear sweeps over a hierarchy
    (PHAST, Delling et al.): up the ranks from `src` over its upward arcs, then down the ranks over the downward
    ones. Valid on any hierarchy that keeps an up-down shortest path for every pair (witness CH or customized CCH).
    Backward, the downward arcs (stored by head) are climbed in reverse and the upward ones (stored by tail)
    descended in reverse. `dist` int64 [r], INF_WEIGHT where unreachable."""
    r = dist.shape[0]
    for v in range(r):
        dist[v] = INF_WEIGHT
    dist[src] = 0
    for u in range(src, r):  # up: every arc into a rank comes from a lower one, already final
        du = dist[u]
        if du >= INF_WEIGHT:
            continue
        if forward:
            for a in range(up_first[u], up_first[u + 1]):
                x = up_arcs[a, 0]
                nd = du + up_arcs[a, 1]
                if nd < dist[x]:
                    dist[x] = nd
        else:
            for a in range(down_first[u], down_first[u + 1]):
                x = down_arcs[a, 0]
                nd = du + down_arcs[a, 1]
                if nd < dist[x]:
                    dist[x] = nd
    for v in range(r - 1, -1, -1):  # down: every arc out of a rank (in the sweep's direction) leads lower
        dv = dist[v]
        if forward:
            for a in range(down_first[v], down_first[v + 1]):
                nd = dist[down_arcs[a, 0]] + down_arcs[a, 1]
                if nd < dv:
                    dv = nd
        else:
            for a in range(up_first[v], up_first[v + 1]):
                nd = dist[up_arcs[a, 0]] + up_arcs[a, 1]
                if nd < dv:
                    dv = nd
        dist[v] = dv


def landmark_tables_on_hierarchy(
    ch: Mapping[str, np.ndarray], nodes: np.ndarray, threads: int = 2
) -> dict[str, np.ndarray]:
    """The `lm_from`/`lm_to` tables of the landmarks `nodes` from a hierarchy's `ch_*` arrays (`ch_rank`,
    `ch_up_*`, `ch_down_*`): two linear sweeps per landmark and direction instead of a Dijkstra each (about a tenth
    of the time), the same exact weights. The landmarks are shared among `threads` threads (the sweeps release the
    GIL; each column is one landmark's, so the tables do not depend on the split): 0.37 -> 0.18 s on 1 M nodes."""
    from concurrent.futures import ThreadPoolExecutor

    rank = np.asarray(ch["ch_rank"], dtype=np.int64)
    up_first, up_arcs = np.asarray(ch["ch_up_first"]), np.asarray(ch["ch_up_arcs"])
    down_first, down_arcs = np.asarray(ch["ch_down_first"]), np.asarray(ch["ch_down_arcs"])
    n, k = len(rank), len(nodes)
    lm_from = np.empty((n, k), dtype=np.uint32)
    lm_to = np.empty((n, k), dtype=np.uint32)
    cols = np.asarray(nodes, dtype=np.int64)

    def run(share: range) -> None:
        dist, dist2 = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        for col in share:
            src = int(rank[cols[col]])
            _phast(up_first, up_arcs, down_first, down_arcs, src, True, dist)
            _phast(up_first, up_arcs, down_first, down_arcs, src, False, dist2)
            _store_columns(dist[rank], dist2[rank], lm_from, lm_to, col)

    workers = max(1, min(threads, k))
    if workers == 1:
        run(range(k))
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="starroute-landmarks") as pool:
            for done in [pool.submit(run, range(w, k, workers)) for w in range(workers)]:
                done.result()  # a distance over 2**32 - 1 ds is raised here
    return {"lm_from": lm_from, "lm_to": lm_to}
