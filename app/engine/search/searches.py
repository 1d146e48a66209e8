"""Search objects over the one core (`app.engine.search.core`): per-thread arrays allocated once, reset by a timestamp.

`Searcher(graph)` owns two directions, the potential cache, the forbidden-arc stamps and the buffers; each call is
one numba call. `CoreSearch(graph, algorithm)` is the point-to-point search of one registry algorithm with the
`run(sources, targets)` shape the router and the tests use.

    s = CoreSearch(graph, "alt")
    res = s.run(sources, targets)          # SearchResult: weight (ds), arcs, seed indices, stats
"""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np

from app.engine.data import freeze, has_landmarks
from app.engine.errors import GraphError, InvalidValue
from app.engine.geo import node_geo
from app.engine.search import core
from app.engine.search.algorithms import ALGORITHMS, Algorithm
from app.engine.search.core import Ends
from app.engine.types import INF_WEIGHT, SearchOptions, SearchResult, SearchStats, SearchTrace, Seeds
from floor.format.graph import Graph
from floor.kernels.jit import entry

STAMP_LIMIT = (2**31 - 8) // 3  # queries per searcher before its stamp arrays are cleared once
ACTIVE_LANDMARKS = 4  # ALT: landmarks used per query (the best bounds at the seeds)
_NO_LM = np.zeros((1, 1), dtype=np.uint32)
_NO_LM.flags.writeable = False
_EMPTY_I32 = np.zeros(0, dtype=np.int32)
_EMPTY_I64 = np.zeros(0, dtype=np.int64)


@functools.cache
def _core() -> Any:
    """The search core's compiled entry (loaded or compiled on first use, never at import): every call below passes
    the kernel's exact signature types (`seed_arrays`, the searcher's own arrays)."""
    return entry(core.search)


METRICS = {"weight": "arc_weight", "duration": "arc_duration", "distance": "arc_dist"}


def graph_arrays(graph: Graph, metric: str = "weight") -> core.GraphArrays:
    """The core's view of a graph (read-only, shared, nothing copied): searching on the routing weight, or on
    `metric` "duration" (travel time: isochrones where the weight is not the travel time) or "distance"; landmarks
    and heuristics only on the weight."""
    freeze(graph)
    lm = (graph.lm_from, graph.lm_to) if has_landmarks(graph) and metric == "weight" else (_NO_LM, _NO_LM)
    return core.GraphArrays(
        graph.first_out,
        graph.arc_head,
        graph.in_first_out,
        graph.in_arc,
        graph.arc_tail,
        getattr(graph, METRICS[metric]),
        graph.arc_flags,
        node_geo(graph).xyz,
        *lm,
    )


def seed_arrays(seeds: Seeds, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(nodes int32, weights int64) contiguous arrays of a seed set (copies only where the dtype differs); with the
    graph's node count `n`, a seed outside 0..n-1 is a ValueError (never a write outside the kernels' arrays)."""
    nodes, weights = seeds.nodes, seeds.weights
    if n is not None and len(nodes) and (int(nodes.max()) >= n or int(nodes.min()) < 0):
        raise ValueError("seed node id out of range")
    if not (isinstance(nodes, np.ndarray) and nodes.dtype == np.int32 and nodes.flags.c_contiguous):
        nodes = np.ascontiguousarray(nodes, dtype=np.int32)
    if not (isinstance(weights, np.ndarray) and weights.dtype == np.int64 and weights.flags.c_contiguous):
        weights = np.ascontiguousarray(weights, dtype=np.int64)
    assert nodes.shape == weights.shape, "seed nodes and weights must have the same length"
    return nodes, weights


class Searcher:
    """One thread's search state over one graph: every core search runs on these arrays, one query at a time."""

    def __init__(self, graph: Graph, active_landmarks: int = ACTIVE_LANDMARKS, metric: str = "weight") -> None:
        self.graph = graph
        self.metric = metric
        self.g = graph_arrays(graph, metric)
        self.n = n = max(graph.num_nodes, 1)
        self.m = graph.num_arcs
        self.geo = node_geo(graph)
        self.query = 0
        self._cap = 0
        self.lab: core.Labels = None  # type: ignore[assignment]
        self._dist = np.zeros((2, n), dtype=np.int64)
        self._pred = np.zeros((2, n), dtype=np.int32)
        self._st = np.zeros((2, n), dtype=np.int32)
        self._ensure_heap(64)
        k = max(1, min(active_landmarks, self.g.lm_from.shape[1]))
        self.p = core.Potential(
            np.zeros(n, dtype=np.float64),
            np.zeros(n, dtype=np.int32),
            np.zeros(6, dtype=np.float64),
            np.zeros(6, dtype=np.float64),
            np.array([self.geo.scale, 1.0, 0.0, 0.0]),
            np.zeros(k, dtype=np.int32),
            np.zeros((k, 4), dtype=np.int64),
            np.zeros((k, 4), dtype=np.uint8),
        )
        self.lm_max = k if has_landmarks(graph) and metric == "weight" else 0
        self.forbid = np.zeros(max(self.m, 1), dtype=np.int32)
        self.buf = np.zeros(2 * n + 2, dtype=np.int32)
        self.out = np.zeros(8, dtype=np.int64)
        self._trace = _EMPTY_I32

    def _ensure_heap(self, seeds: int) -> None:
        """Heaps of m + seeds entries: every push follows a strict label improvement over one relaxed arc."""
        need = self.m + max(seeds, 64)
        if need > self._cap:
            self._cap = need
            heaps = (np.empty(need, dtype=np.float64), np.empty(need, dtype=np.int32))
            heaps += (np.empty(need, dtype=np.float64), np.empty(need, dtype=np.int32))  # type: ignore[assignment]
            self.lab = core.Labels(self._dist, self._pred, self._st, *heaps)  # type: ignore[call-arg]

    def next_query(self) -> int:
        """Advance the timestamp, clearing every stamp array once every ~7e8 queries."""
        self.query += 1
        if self.query > STAMP_LIMIT:
            for a in (self._st, self.p.pot_st, self.forbid):
                a.fill(0)
            self.query = 1
        return self.query

    def _filter(self, options: SearchOptions | None, q: int) -> tuple[np.uint8, int]:
        if options is None:
            return np.uint8(0), 0
        fq = 0
        if options.forbidden is not None and len(options.forbidden):
            self.forbid[np.asarray(options.forbidden, dtype=np.int64)] = q
            fq = q
        return np.uint8(options.exclude_flags), fq

    def _trace_buffer(self, options: SearchOptions | None) -> np.ndarray:
        if options is None or not options.trace:
            return _EMPTY_I32
        if self._trace.shape[0] != options.trace_limit:
            self._trace = np.zeros(options.trace_limit, dtype=np.int32)
        return self._trace

    def point_to_point(
        self, sources: Seeds, targets: Seeds, algorithm: Algorithm, options: SearchOptions | None = None
    ) -> SearchResult:
        """The best path from any source seed to any target seed with `algorithm` (a core one)."""
        t0 = time.perf_counter_ns()
        s_nodes, s_w = seed_arrays(sources, self.n)
        t_nodes, t_w = seed_arrays(targets, self.n)
        if s_nodes.size == 0 or t_nodes.size == 0:
            return self._unreachable(t0, algorithm.name)
        self._ensure_heap(max(s_nodes.size, t_nodes.size))
        q = self.next_query()
        excl, fq = self._filter(options, q)
        eps = 1.0 if options is None else float(options.epsilon)
        self.p.par[1] = eps
        pk = core.PK_NONE
        if algorithm.potential != "none":
            pk = core.PK_FORWARD if algorithm.bidirectional else core.PK_TARGET
            self.p.tp[4], self.p.tp[5] = targets.lon, targets.lat
            self.p.sp[4], self.p.sp[5] = sources.lon, sources.lat
        lm_max = self.lm_max if algorithm.potential == "landmarks" else 0
        trace = self._trace_buffer(options)
        mode = core.MODE_BI if algorithm.bidirectional else core.MODE_UNI
        _core()(
            self.g, self.lab, Ends(s_nodes, s_w, t_nodes, t_w), q, mode, pk, self.p, lm_max, excl, self.forbid, fq,
            trace, self.buf, self.out, INF_WEIGHT,
        )  # fmt: skip
        return self._result(t0, algorithm.name, trace)

    def one_to_many(
        self, sources: Seeds, targets: np.ndarray, forward: bool = True, options: SearchOptions | None = None
    ) -> int:
        """Dijkstra from `sources` until every node of `targets` is settled (all nodes when empty), within
        `options.cutoff`; the labels stay in the searcher for `settled_weights()`. Returns the query number."""
        s_nodes, s_w = seed_arrays(sources, self.n)
        self._ensure_heap(s_nodes.size)
        q = self.next_query()
        excl, fq = self._filter(options, q)
        cutoff = int(INF_WEIGHT) if options is None else int(options.cutoff)
        trace = self._trace_buffer(options)
        t = np.ascontiguousarray(targets, dtype=np.int32)
        pk = core.PK_NONE if forward else core.PK_BACKWARD
        _core()(
            self.g, self.lab, Ends(s_nodes, s_w, t, _EMPTY_I64), q, core.MODE_ALL, pk, self.p, 0, excl, self.forbid, fq,
            trace, self.buf, self.out, cutoff,
        )  # fmt: skip
        return q

    def bounded_tree(
        self, seeds: Seeds, far: Seeds, forward: bool, options: SearchOptions
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The shortest-path tree from `seeds` (forward; backward: towards them) over every node v with
        label(v) + bound(v, far) <= `options.cutoff`, as `tree()` gives it: the nodes that can lie on a route from
        the sources to the targets within the cutoff, with exact labels (keys on the consistent A* / ALT bound
        towards `far`, or from it backward)."""
        s_nodes, s_w = seed_arrays(seeds, self.n)
        t_nodes, t_w = seed_arrays(far, self.n)
        self._ensure_heap(s_nodes.size)
        q = self.next_query()
        excl, fq = self._filter(options, q)
        self.p.par[1] = 1.0
        if forward:
            self.p.tp[4], self.p.tp[5] = far.lon, far.lat
        else:
            self.p.sp[4], self.p.sp[5] = far.lon, far.lat
        pk = core.PK_TARGET if forward else core.PK_SOURCE
        _core()(
            self.g, self.lab, Ends(s_nodes, s_w, t_nodes, t_w), q, core.MODE_ALL, pk, self.p, self.lm_max, excl,
            self.forbid, fq, _EMPTY_I32, self.buf, self.out, int(options.cutoff),
        )  # fmt: skip
        return self.tree(q)

    def settled_weights(self, q: int) -> np.ndarray:
        """int64 [n] weights settled by the one-to-many query `q` (INF_WEIGHT elsewhere)."""
        n = self.graph.num_nodes
        done = self._st[0, :n] == 3 * q + 1
        return np.where(done, self._dist[0, :n], INF_WEIGHT)

    def tree(self, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(labels int64 [n], predecessor arcs int32 [n], settled bool [n]) of the one-to-many query `q`, copied: the
        shortest-path tree it grew (`pred` < 0 at its seeds)."""
        n = self.graph.num_nodes
        return self._dist[0, :n].copy(), self._pred[0, :n].copy(), self._st[0, :n] == 3 * q + 1

    def settled(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        """(labels int64 [n], settled bool [n]) of the one-to-many query `q` (views, valid until the next query)."""
        n = self.graph.num_nodes
        return self._dist[0, :n], self._st[0, :n] == 3 * q + 1

    def labelled(self, q: int) -> np.ndarray:
        """bool [n]: the nodes the one-to-many query `q` gave a label (settled or not)."""
        st = self._st[0, : self.graph.num_nodes]
        return (st == 3 * q) | (st == 3 * q + 1)

    def _result(self, t0: int, name: str, trace: np.ndarray) -> SearchResult:
        weight, meet, settled, relaxed, k, s_seed, t_seed, ntrace = self.out.tolist()
        tr = None
        if trace.shape[0]:
            tr = SearchTrace(trace[:ntrace].copy(), int(meet), ntrace >= trace.shape[0])
        stats = SearchStats(name, int(settled), int(relaxed), (time.perf_counter_ns() - t0) / 1000.0)
        if meet < 0 or weight >= INF_WEIGHT:
            return SearchResult(int(INF_WEIGHT), np.zeros(0, dtype=np.int32), -1, -1, stats, tr)
        return SearchResult(int(weight), self.buf[:k].copy(), int(s_seed), int(t_seed), stats, tr)

    def _unreachable(self, t0: int, name: str) -> SearchResult:
        stats = SearchStats(name, 0, 0, (time.perf_counter_ns() - t0) / 1000.0)
        return SearchResult(int(INF_WEIGHT), np.zeros(0, dtype=np.int32), -1, -1, stats)

    def bounds(self, sources: Seeds, targets: Seeds, landmarks: bool) -> tuple[np.ndarray, np.ndarray]:
        """(pi_t, pi_s) float64 [n]: the bounds a bidirectional search with these seeds uses (tests, diagnostics)."""
        s_nodes, s_w = seed_arrays(sources, self.n)
        t_nodes, t_w = seed_arrays(targets, self.n)
        self.p.tp[4], self.p.tp[5] = targets.lon, targets.lat
        self.p.sp[4], self.p.sp[5] = sources.lon, sources.lat
        self.p.par[1] = 1.0
        q = self.next_query()
        _core()(
            self.g, self.lab, Ends(s_nodes, s_w, t_nodes, t_w), q, core.MODE_BOUNDS, core.PK_FORWARD, self.p,
            self.lm_max if landmarks else 0, np.uint8(0), self.forbid, 0, _EMPTY_I32, self.buf, self.out, INF_WEIGHT,
        )  # fmt: skip
        n = self.graph.num_nodes
        return self._dist[0, :n].astype(np.float64), self._dist[1, :n].astype(np.float64)


class CoreSearch:
    """A registry algorithm on its own `Searcher`: `CoreSearch(graph, "alt").run(sources, targets)`."""

    def __init__(
        self,
        graph: Graph,
        algorithm: str | Algorithm = "dijkstra",
        searcher: Searcher | None = None,
        active_landmarks: int = ACTIVE_LANDMARKS,
    ) -> None:
        spec = ALGORITHMS.get(algorithm) if isinstance(algorithm, str) else algorithm
        if spec is None or spec.engine != "core":
            raise InvalidValue(f"{algorithm!r} is not a core search algorithm")
        if spec.needs == "landmarks" and not has_landmarks(graph):
            raise GraphError("graph has no ALT landmarks: re-run `starroute preprocess` with --landmarks N")
        self.spec = spec
        self.algorithm = spec.name
        self.searcher = searcher or Searcher(graph, active_landmarks)

    @property
    def query(self) -> int:
        return self.searcher.query

    @query.setter
    def query(self, value: int) -> None:
        self.searcher.query = value

    def run(self, sources: Seeds, targets: Seeds, options: SearchOptions | None = None) -> SearchResult:
        """Best path from any source seed to any target seed; unreachable gives weight INF_WEIGHT and no arcs."""
        return self.searcher.point_to_point(sources, targets, self.spec, options)

    def bounds(self, sources: Seeds, targets: Seeds) -> tuple[np.ndarray, np.ndarray]:
        """(pi_t, pi_s) of this algorithm's potentials for every node (tests, diagnostics)."""
        return self.searcher.bounds(sources, targets, self.spec.potential == "landmarks")
