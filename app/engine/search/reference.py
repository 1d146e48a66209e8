"""The reference Dijkstra: the oracle every speed-up is checked against, kept apart from the search core on purpose.

A plain, separate implementation (its own relax loop, its own arrays), so that a bug in `app.engine.search.core`
cannot hide
in the oracle too. Tests and benchmarks use it; the engine's own "dijkstra" algorithm runs on the core.

A search object owns its per-node arrays (allocated once in `__init__`) and resets them between queries with a
timestamp: node v is *labelled* in query q when `stamp[v] >= 2q` and *settled* when `stamp[v] == 2q + 1`, so a
query never clears O(n) memory. Both kernels use a binary heap with lazy deletion (a node is pushed again when its
label improves, stale entries are skipped on pop); each arc is relaxed at most once per direction, so a heap of
`m + seeds` entries always suffices. Ties break on the node id (heap order), so results are deterministic.

Seeds are virtual end points: a source seed i starts node `sources.nodes[i]` at weight `sources.weights[i]`, and
reaching target seed j's node costs `targets.weights[j]` more. The result's `arcs` run from the chosen source seed
node to the chosen target seed node; its weight includes both seed weights.
"""

from __future__ import annotations

import time

import numpy as np

from app.engine.types import INF_WEIGHT, SearchOptions, SearchResult, SearchStats, Seeds, refuse_options
from floor.format.graph import Graph
from floor.kernels.heap import heap_pop, heap_push, new_heap
from floor.kernels.jit import kernel

_STAMP_LIMIT = (1 << 30) - 2  # queries per object before the stamp arrays are cleared once


# --------------------------------------------------------------------------------------------------- shared helpers


def seed_arrays(seeds: Seeds) -> tuple[np.ndarray, np.ndarray]:
    """(nodes int32, weights int64) contiguous arrays of a seed set (copies only where the dtype differs).

    Seed weights must be >= 0 (the router's phantom offsets are).
    """
    nodes = seeds.nodes
    weights = seeds.weights
    if nodes.dtype != np.int32 or not nodes.flags.c_contiguous:
        nodes = np.ascontiguousarray(nodes, dtype=np.int32)
    if weights.dtype != np.int64 or not weights.flags.c_contiguous:
        weights = np.ascontiguousarray(weights, dtype=np.int64)
    assert nodes.shape == weights.shape, "seed nodes and weights must have the same length"
    return nodes, weights


@kernel
def forward_chain(pred: np.ndarray, arc_tail: np.ndarray, v: int, out: np.ndarray) -> tuple[int, int]:
    """Write the arcs from a source seed to `v` (following forward predecessor arcs) into `out` in path order.

    Returns (number of arcs, source seed index). `pred[x]` is an arc id, or `-1 - seed` at a seed.
    """
    k = 0
    while pred[v] >= 0:
        a = pred[v]
        out[k] = a
        k += 1
        v = arc_tail[a]
    for i in range(k // 2):
        out[i], out[k - 1 - i] = out[k - 1 - i], out[i]
    return k, -1 - pred[v]


class SearchBase:
    """Common state of the search objects: graph arrays, stamps, the heap capacity rule, result assembly."""

    algorithm = "base"
    directions = 1

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.n = graph.num_nodes
        self.m = graph.num_arcs
        self.first_out = np.asarray(graph.first_out)
        self.arc_head = np.asarray(graph.arc_head)
        self.arc_tail = np.asarray(graph.arc_tail)
        self.arc_weight = np.asarray(graph.arc_weight)
        self.in_first_out = np.asarray(graph.in_first_out)
        self.in_arc = np.asarray(graph.in_arc)
        n = max(self.n, 1)
        self.query = 0
        self.dist = [np.zeros(n, dtype=np.int64) for _ in range(self.directions)]
        self.pred = [np.zeros(n, dtype=np.int32) for _ in range(self.directions)]
        self.stamp = [np.zeros(n, dtype=np.int32) for _ in range(self.directions)]
        self.heap_capacity = 0
        self.heaps: list[tuple[np.ndarray, np.ndarray]] = []
        self._ensure_heap(0)
        self.path_buf = np.zeros(2 * self.n + 2, dtype=np.int32)  # forward + backward tree paths
        self.out = np.zeros(8, dtype=np.int64)

    def _ensure_heap(self, seeds: int) -> None:
        """Heaps of m + seeds entries: every push follows a strict label improvement over one relaxed arc."""
        need = self.m + max(seeds, 64)
        if need > self.heap_capacity:
            self.heap_capacity = need
            self.heaps = [new_heap(need) for _ in range(self.directions)]

    def _next_query(self) -> int:
        """Advance the timestamp (clearing the stamp arrays once every ~1e9 queries)."""
        self.query += 1
        if self.query > _STAMP_LIMIT:
            self._reset_stamps()
            self.query = 1
        return self.query

    def _reset_stamps(self) -> None:
        for st in self.stamp:
            st.fill(0)

    def _result(self, t0: int) -> SearchResult:
        """The SearchResult of the kernel's `out` = [weight, end node, settled, relaxed, arcs, s seed, t seed]."""
        weight, node, settled, relaxed, k, s_seed, t_seed = self.out[:7].tolist()
        if node < 0 or weight >= INF_WEIGHT:
            return self._unreachable(t0, settled, relaxed)
        return SearchResult(weight, self.path_buf[:k].copy(), s_seed, t_seed, self._stats(t0, settled, relaxed))

    def _unreachable(self, t0: int, settled: int = 0, relaxed: int = 0) -> SearchResult:
        return SearchResult(int(INF_WEIGHT), np.zeros(0, dtype=np.int32), -1, -1, self._stats(t0, settled, relaxed))

    def _stats(self, t0: int, settled: int, relaxed: int) -> SearchStats:
        return SearchStats(self.algorithm, int(settled), int(relaxed), (time.perf_counter_ns() - t0) / 1000.0)


# ------------------------------------------------------------------------------------------------- unidirectional


@kernel
def _dijkstra(
    graph,
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
    hk,
    hn,
    buf,
    out,
):  # pragma: no cover - numba
    """Seeded Dijkstra until the best target seed is settled (or, with no targets, to exhaustion); `graph` is the tuple
    (first_out, arc_head, arc_tail, arc_weight).

    out <- [weight, best target node, settled, relaxed, path arcs, source seed, target seed]; the path's arcs go to
    `buf[:out[4]]`. Target seed weights are kept per node in `tw` (stamped by `tw_st == q`), the smallest seed index
    winning among equal weights.
    """
    first_out, arc_head, arc_tail, arc_weight = graph
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
            size = heap_push(hk, hn, size, float(s_w[i]), v)
    best = INF_WEIGHT
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
                size = heap_push(hk, hn, size, float(nd), x)
    out[0] = best
    out[1] = best_node
    out[2] = settled
    out[3] = relaxed
    if best_node >= 0:
        k, s_seed = forward_chain(pred, arc_tail, best_node, buf)
        out[4] = k
        out[5] = s_seed
        out[6] = tw_idx[best_node]


class DijkstraSearch(SearchBase):
    """Reference unidirectional Dijkstra from source seeds to target seeds (the oracle for every speed-up).

    >>> res = DijkstraSearch(graph).run(sources, targets)  # doctest: +SKIP
    >>> res.weight, res.arcs
    """

    algorithm = "dijkstra"
    directions = 1

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)
        n = max(self.n, 1)
        self.tw = np.zeros(n, dtype=np.int64)
        self.tw_idx = np.zeros(n, dtype=np.int32)
        self.tw_st = np.zeros(n, dtype=np.int32)

    def _reset_stamps(self) -> None:
        super()._reset_stamps()
        self.tw_st.fill(0)

    def run(self, sources: Seeds, targets: Seeds, options: SearchOptions | None = None) -> SearchResult:
        """Best path from any source seed to any target seed; unreachable gives weight INF_WEIGHT and no arcs. The
        oracle searches the graph as it is: any option but the defaults is refused (`InvalidValue`)."""
        if options is not None:
            refuse_options(options, "the reference Dijkstra")
        t0 = time.perf_counter_ns()
        s_nodes, s_w = seed_arrays(sources)
        t_nodes, t_w = seed_arrays(targets)
        if s_nodes.size == 0 or t_nodes.size == 0:
            return self._unreachable(t0)
        self._ensure_heap(s_nodes.size)
        q = self._next_query()
        hk, hn = self.heaps[0]
        out = self.out
        _dijkstra(
            (self.first_out, self.arc_head, self.arc_tail, self.arc_weight),
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
            hk,
            hn,
            self.path_buf,
            out,
        )
        return self._result(t0)

    def one_to_all(self, source: int | Seeds) -> np.ndarray:
        """Weights (int64 [n], INF_WEIGHT where unreachable) from node `source` (or a seed set) to every node."""
        if isinstance(source, Seeds):
            s_nodes, s_w = seed_arrays(source)
        else:
            s_nodes, s_w = np.array([source], dtype=np.int32), np.zeros(1, dtype=np.int64)
        self._ensure_heap(s_nodes.size)
        q = self._next_query()
        hk, hn = self.heaps[0]
        _dijkstra(
            (self.first_out, self.arc_head, self.arc_tail, self.arc_weight),
            s_nodes,
            s_w,
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.int64),
            self.dist[0],
            self.pred[0],
            self.stamp[0],
            self.tw,
            self.tw_idx,
            self.tw_st,
            q,
            hk,
            hn,
            self.path_buf,
            self.out,
        )
        return np.where(self.stamp[0][: self.n] >= 2 * q, self.dist[0][: self.n], INF_WEIGHT)


def dijkstra_weights(graph: Graph, source_node: int) -> np.ndarray:
    """One-to-all reference weights (int64 [n], ds; INF_WEIGHT where unreachable) from `source_node`.

    >>> dijkstra_weights(graph, 0)[5]  # doctest: +SKIP
    """
    return DijkstraSearch(graph).one_to_all(int(source_node))
