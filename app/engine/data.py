"""The engine's read-only graph facade: load a graph directory and derive the few per-chain tables the router needs.

Everything here is computed once at load, never per request. Arrays stay memory-mapped (read-only) and are exposed
as plain `ndarray` views so that numba sees one array type whatever the graph came from.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from app.engine.errors import GraphError
from app.engine.types import ExcludeSet
from floor.format.arrays import FormatError, built_on_search_graph, search_view_arrays
from floor.format.graph import Graph, load_graph
from floor.format.manifest import same_build as same_manifest_build
from floor.format.road_classification import osrm_edge_flip
from floor.format.units import COORD_SCALE, FLAG_FERRY, TRAVEL_MODE_CODE


def load(path: str | os.PathLike[str], mmap: bool = True, reuse: Graph | None = None) -> Graph:
    """Load a graph directory (memory-mapped, read-only); a bad or missing directory raises `GraphError`. `reuse`: the
    graph served so far, whose arrays no metric replaces are kept when the directory holds the same build.

    >>> graph = load("graphs/monaco-car")  # doctest: +SKIP
    """
    try:
        graph = load_graph(path, mmap=mmap, reuse=reuse)
        for _ in range(3):  # a metric whose search stages are pending: computed now (a newer one may replace it)
            mid = (graph.manifest.get("metric") or {}).get("id")
            if not (graph.manifest.get("metric") or {}).get("pending"):
                break
            stages = complete_metric(path, mid)
            again = load_graph(path, mmap=mmap, reuse=reuse)  # with the stages, if this or another process added them
            now = again.manifest.get("metric") or {}
            if stages is not None and now.get("pending") and now.get("id") == mid:
                again = with_stages(again, stages.arrays, stages.manifest)  # a read-only directory: kept in memory
            graph = again
    except FormatError as exc:
        raise GraphError(str(exc)) from None
    return freeze(graph)  # memmap -> read-only ndarray views over the same pages


def complete_metric(path: str | os.PathLike[str], metric_id: str | None = None) -> Any:
    """The search stages of the graph's current metric when they are pending (`starroute customize` leaves them to
    the first load), computed and added to its directory; None when there is nothing to do. The engine's one door
    into the pipeline (`preprocessing.customize.complete_metric`): a server's supervisor calls it once on SIGHUP,
    `load` whenever it meets a pending metric."""
    from preprocessing.customize import complete_metric as complete

    return complete(path, metric_id)


def same_build(a: Graph, b: Graph) -> bool:
    """Whether two loaded graphs are the same build (the same preprocessing run), whatever their metrics."""
    return same_manifest_build(a.manifest, b.manifest)


def with_stages(graph: Graph, arrays: dict[str, np.ndarray], fields: dict[str, object]) -> Graph:
    """`graph` (its metric's stages pending) with those stages held in memory: the metric's directory could not
    take them."""
    manifest = {**graph.manifest, **fields}
    manifest["metric"] = {**manifest["metric"], "pending": [], "stages": {"in_memory": True}}
    return Graph(graph.path, manifest, {**graph.arrays, **arrays}, graph.files)


def freeze(graph: Graph) -> Graph:
    """Make every array of `graph` a read-only C-contiguous view (in place, idempotent; nothing is copied unless an
    array is not contiguous). Loaded graphs are read-only already; in-memory ones (tests, the pipeline) become so, so
    each kernel compiles for one array type only."""
    for name, a in graph.arrays.items():
        if isinstance(a, np.ndarray) and not a.flags.writeable and a.flags.c_contiguous and type(a) is np.ndarray:
            continue
        v = np.ascontiguousarray(a).view(np.ndarray)
        v.flags.writeable = False
        graph.arrays[name] = v
    return graph


def excludable(graph: Graph) -> list[ExcludeSet]:
    """The class sets this graph's profile lets a request exclude, from the manifest."""
    return [ExcludeSet(frozenset(e.classes), e.mask, e.prefix) for e in graph.meta.excludable]


def is_edge_based(graph: Graph) -> bool:
    """Whether the graph's searches run on an edge-based graph (turn costs and restrictions, `eb_*` arrays)."""
    return graph.meta.search_graph == "edge" and "eb_first_out" in graph.arrays


_DERIVED_LOCK = threading.RLock()  # reentrant: a derived value may derive another while it is built
_NONE = object()
T = TypeVar("T")


def derived(owner: object, key: str, build: Callable[[], T]) -> T:
    """The value `key` derived from `owner` (a graph or its router), built once by `build` and kept as long as the
    owner lives: the engine's one scheme for per-graph caches (a dict on the owner, filled under a lock so that two
    threads asking at once build it once)."""
    store = owner.__dict__.setdefault("_derived", {})
    value = store.get(key, _NONE)
    if value is _NONE:
        with _DERIVED_LOCK:
            value = store.get(key, _NONE)
            if value is _NONE:
                value = store[key] = build()
    return value  # type: ignore[return-value]


def search_graph(graph: Graph) -> Graph:
    """The graph the searches run on: the edge-based view (the `eb_*` arrays under the road graph's names, with the
    CH and landmark stages built on it) when the graph has one, else the graph itself. Built once per graph."""
    if not is_edge_based(graph):
        return graph

    def view() -> Graph:
        arrays = search_view_arrays(graph.arrays)
        arrays.update({k: v for k, v in graph.arrays.items() if built_on_search_graph(k)})
        return freeze(Graph(graph.path, graph.manifest, arrays, graph.files))

    return derived(graph, "search_view", view)


def has_ch(graph: Graph) -> bool:
    """Whether the graph carries a contraction hierarchy (the `ch_*` arrays)."""
    return "ch_rank" in graph.arrays


def has_landmarks(graph: Graph) -> bool:
    """Whether the graph carries ALT landmark tables (any `lm_*` array)."""
    return any(name.startswith("lm_") for name in graph.arrays)


@dataclass(frozen=True)
class ChainIndex:
    """Per-chain derived tables: the arc running each way along a chain, its end nodes, its component.

    `fwd_arc[c]` runs from chain point 0 to the last point (`arc_geom == 2c`), `bwd_arc[c]` the other way
    (`arc_geom == 2c + 1`); -1 when absent. `first_node`/`last_node` are the graph nodes at the chain's ends (-1 for
    chains no arc uses). `component` is the larger SCC id of the two ends (0 only when both are in the largest SCC),
    `component_size` that component's node count. `snappable` marks chains a waypoint may snap to: used by some arc
    travelled in one of the profile's start modes (`start_modes`: OSRM's `is_startpoint`, a way with such a mode
    either way, so no ferry, and for bicycles no train); a graph without `arc_mode`: any chain but a ferry.
    """

    fwd_arc: np.ndarray  # int32 [c]
    bwd_arc: np.ndarray  # int32 [c]
    first_node: np.ndarray  # int32 [c]
    last_node: np.ndarray  # int32 [c]
    component: np.ndarray  # int32 [c]
    component_size: np.ndarray  # int64 [c] nodes in `component` (0 for unused chains)
    snappable: np.ndarray  # bool [c]
    used: np.ndarray  # bool [c]: some arc runs along the chain
    osrm_flip: np.ndarray  # bool [c]: OSRM's edge runs against the chain (`road_classification.osrm_edge_flip`)


def chain_index(graph: Graph, search: Graph | None = None) -> ChainIndex:
    """Build the `ChainIndex` of a graph (vectorised, O(m + c)). With the edge-based `search` graph, a chain's
    component is the best one of its arcs' search nodes (search node i is road arc i): a road whose search nodes
    form a small island (e.g. only reachable through a forbidden turn) is a tiny component, as in OSRM."""
    c = int(graph.geom_first.shape[0] - 1)
    geom = np.asarray(graph.arc_geom, dtype=np.int64)
    arcs = np.arange(geom.shape[0], dtype=np.int32)
    chain = geom >> 1
    rev = (geom & 1).astype(bool)
    fwd = np.full(c, -1, dtype=np.int32)
    bwd = np.full(c, -1, dtype=np.int32)
    # Reverse assignment order so the smallest arc id wins should a chain carry two arcs one way.
    fwd[chain[~rev][::-1]] = arcs[~rev][::-1]
    bwd[chain[rev][::-1]] = arcs[rev][::-1]
    tail, head = graph.arc_tail, graph.arc_head
    first = np.where(fwd >= 0, tail[np.maximum(fwd, 0)], np.where(bwd >= 0, head[np.maximum(bwd, 0)], -1))
    last = np.where(fwd >= 0, head[np.maximum(fwd, 0)], np.where(bwd >= 0, tail[np.maximum(bwd, 0)], -1))
    first = first.astype(np.int32)
    last = last.astype(np.int32)
    used = first >= 0
    comp_arr = graph.node_component
    component = np.where(used, np.maximum(comp_arr[np.maximum(first, 0)], comp_arr[np.maximum(last, 0)]), -1)
    if search is not None:
        comp_arr = np.asarray(search.node_component)
        big = np.iinfo(np.int32).max
        cf = np.where(fwd >= 0, comp_arr[np.maximum(fwd, 0)], big)
        cb = np.where(bwd >= 0, comp_arr[np.maximum(bwd, 0)], big)
        component = np.where(used, np.minimum(cf, cb), -1)
    sizes = np.bincount(np.asarray(comp_arr, dtype=np.int64), minlength=1)
    component_size = np.where(used, sizes[np.maximum(component, 0)], 0).astype(np.int64)
    start = start_chains(graph, fwd, bwd)
    flip = osrm_edge_flip(graph.arrays)
    return ChainIndex(fwd, bwd, first, last, component.astype(np.int32), component_size, used & start, used, flip)


def start_arcs(graph: Graph) -> np.ndarray:
    """bool [m]: the arcs whose travel mode a waypoint may start or end on (OSRM's `allowed_start_modes`, the
    manifest's `start_modes`); without `arc_mode` or `start_modes` (graphs built before them), every arc but a
    ferry."""
    starts = graph.meta.start_modes
    if not graph.has("arc_mode") or starts is None:
        return (np.asarray(graph.arc_flags) & FLAG_FERRY) == 0
    allowed = np.zeros(256, dtype=bool)
    allowed[[TRAVEL_MODE_CODE[m] for m in starts if m in TRAVEL_MODE_CODE]] = True
    return allowed[np.asarray(graph.arc_mode)]


def no_start_arcs(graph: Graph) -> np.ndarray | None:
    """bool [m]: arcs whose way refuses waypoints whatever its mode (`arc_startpoint` 0: car.lua's private service
    roads); None when there are none. Routes, tables and nearest skip them (OSRM's `is_startpoint`); map matching,
    which OSRM runs on every edge, does not."""
    if not graph.has("arc_startpoint"):
        return None
    bad = np.asarray(graph.arc_startpoint) == 0
    return bad if bad.any() else None


def start_chains(graph: Graph, fwd: np.ndarray, bwd: np.ndarray) -> np.ndarray:
    """bool [c]: chains a waypoint may snap to, by `start_arcs` of the arcs along them (`fwd` / `bwd`, -1 none):
    OSRM's `is_startpoint` holds for a way whose mode in either direction is a start mode; a chain no arc runs
    along is none."""
    ok = start_arcs(graph)
    out = np.zeros(len(fwd), dtype=bool)
    for a in (fwd, bwd):
        has = a >= 0
        out[has] |= ok[a[has]]
    return out


def degrees(fixed: np.ndarray) -> np.ndarray:
    """Fixed-point 1e-7 degree coordinates as float64 degrees (the one conversion used everywhere)."""
    return np.asarray(fixed, dtype=np.float64) / COORD_SCALE
