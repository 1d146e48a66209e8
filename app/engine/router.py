"""The engine facade the API calls: snapping, per-thread query objects, routes over waypoints and tables.

`Router(graph)` is built once per process and shared (immutable); `router.query()` hands each thread its own
`Query`, whose search objects allocate their O(n) arrays once and are reused for every request of that thread.

    router = Router(graph)
    a, b = router.snap(7.42, 43.735), router.snap(7.43, 43.74)
    route = router.query().route([a, b], algorithm="ch")
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from preprocessing.artifacts import Graph
from preprocessing.graph import haversine_m
from preprocessing.jit import kernel
from preprocessing.profiles.base import ROAD_CLASSES
from preprocessing.units import COORD_SCALE, DIST_PER_METRE, FLAG_FERRY, FLAG_ROUNDABOUT, WEIGHT_PER_SECOND

from . import alternatives
from .algorithms import ALGORITHMS, Algorithm
from .assemble import AT_FIRST, AT_LAST, BWD, FWD, Assembler, join_route
from .ch import CHSearch
from .core import path_dists
from .data import ExcludeSet, chain_index, excludable, freeze, has_ch, has_landmarks, is_edge_based, search_graph
from .edges import EdgeMap
from .errors import InvalidValue, NoRoute, NoSegment
from .isochrone import arc_starts, point_pieces, reached_arc_pieces, reached_pieces
from .roads import RoadGraph
from .search import CoreSearch, Searcher, SearchOptions
from .snap import MIN_COMPONENT_SIZE, Candidates, Snapper, choose
from .table import CHTable
from .types import (
    INF_WEIGHT,
    Leg,
    Phantom,
    Route,
    RouteOptions,
    RouteResult,
    SearchResult,
    SearchStats,
    SearchTrace,
    Seeds,
    Table,
)

INF = int(INF_WEIGHT)

_MISSING = {
    "ch": "a contraction hierarchy: re-run `starroute preprocess` without --no-ch",
    "landmarks": "landmarks: re-run `starroute preprocess` with --landmarks N",
}


class Search(Protocol):
    """A point-to-point search (one instance per thread; arrays allocated in `__init__`)."""

    def run(self, sources: Seeds, targets: Seeds) -> SearchResult: ...


SearchFactory = Callable[[Graph], Search]


@dataclass(frozen=True)
class ArcInfo:
    """What the step builder needs to know about an arc."""

    name: str
    ref: str
    road_class: str
    flags: int

    @property
    def ferry(self) -> bool:
        return bool(self.flags & FLAG_FERRY)

    @property
    def roundabout(self) -> bool:
        return bool(self.flags & FLAG_ROUNDABOUT)


class Router:
    """Shared, immutable routing facade over one graph: snapping index, algorithm registry, per-thread queries.

    `max_snap_m` caps every snap radius (None = unlimited). `min_component_size`: smaller strongly connected
    components are tiny (see `app.engine.snap`). `algorithms` replaces the registry (name -> factory taking the
    graph), e.g. to plug in a reference search in tests.
    """

    def __init__(
        self,
        graph: Graph,
        max_snap_m: float | None = None,
        algorithms: Mapping[str, SearchFactory] | None = None,
        min_component_size: int = MIN_COMPONENT_SIZE,
    ) -> None:
        t0 = time.perf_counter()
        self.graph = freeze(graph)
        # the searches' graph: the edge-based one (turn costs, restrictions) where the graph has it
        self.search_graph = search_graph(self.graph)
        self.edges = EdgeMap(self.graph, self.search_graph) if is_edge_based(self.graph) else None
        self.max_snap_m = max_snap_m
        self.chains = chain_index(graph, self.search_graph if self.edges is not None else None)
        self.snapper = Snapper(graph, self.chains, min_component_size)
        self.assembler = Assembler(graph)
        self._missing: dict[str, str] = {}
        factories: dict[str, Algorithm | SearchFactory] = {}
        if algorithms is None:
            for name, spec in ALGORITHMS.items():
                if spec.needs == "ch" and not has_ch(graph) or spec.needs == "landmarks" and not has_landmarks(graph):
                    self._missing[name] = f"algorithm {name!r} needs a graph with {_MISSING[spec.needs]}"
                    continue
                factories[name] = spec
            self._table_factory = CHTable if has_ch(graph) else None
        else:
            factories.update(algorithms)
            self._table_factory = None
        self._factories = factories
        self.excludable = excludable(graph)
        self._local = threading.local()
        self.build_seconds = time.perf_counter() - t0

    # -- registry and metadata -------------------------------------------------------------------------------------

    @property
    def algorithms(self) -> tuple[str, ...]:
        """Names of the algorithms this graph and build can answer with, fastest first."""
        return tuple(self._factories)

    @property
    def default_algorithm(self) -> str:
        """The algorithm to use when none is asked for: "ch" where available, else the first available one."""
        return "ch" if "ch" in self._factories else next(iter(self._factories), "ch")

    def factory(self, algorithm: str) -> Algorithm | SearchFactory:
        """The registry entry (or a plugged-in factory) of `algorithm`; `InvalidValue` for an unknown or unavailable
        name."""
        f = self._factories.get(algorithm)
        if f is None:
            why = self._missing.get(algorithm)
            if why is None:
                why = f"unknown algorithm {algorithm!r}: choose one of {', '.join(self.algorithms)}"
            raise InvalidValue(why)
        return f

    def exclude_set(self, classes: Iterable[str]) -> ExcludeSet | None:
        """The excludable set equal to `classes` (None for none); `InvalidValue` for an unknown class or a
        combination the profile does not offer (OSRM's rule: exactly one of its `excludable` sets)."""
        wanted = frozenset(classes)
        if not wanted:
            return None
        known = sorted({c for e in self.excludable for c in e.classes})
        unknown = sorted(wanted - set(known))
        if unknown:
            offer = ", ".join(known) if known else "none"
            raise InvalidValue(f"exclude: unknown class {unknown[0]!r} (this profile can exclude: {offer})")
        for e in self.excludable:
            if e.classes == wanted:
                return e
        sets = "; ".join("+".join(sorted(e.classes)) for e in self.excludable)
        raise InvalidValue(f"Exclude flag combination is not supported (this profile offers: {sets})")

    def info(self) -> dict[str, Any]:
        """Graph and index metadata for health endpoints."""
        g, mf = self.graph, self.graph.manifest
        return {
            "profile": mf.get("profile"),
            "nodes": g.num_nodes,
            "arcs": g.num_arcs,
            "chains": int(g.geom_first.shape[0] - 1),
            "bbox": mf.get("bbox"),
            "fingerprint": mf.get("fingerprint"),
            "algorithms": list(self.algorithms),
            "has_ch": has_ch(g),
            "has_landmarks": has_landmarks(g),
            "snap_segments": self.snapper.num_segments,
            "snap_index_seconds": round(self.snapper.build_seconds, 3),
            "router_seconds": round(self.build_seconds, 3),
            "max_snap_m": self.max_snap_m,
        }

    def forbidden_arcs(self, areas: Any) -> np.ndarray:
        """int32 ids of the arcs touching `areas` (`app.engine.areas.Areas`): what a request avoiding them may not
        use."""
        from .areas import forbidden_arcs

        return forbidden_arcs(areas, self.graph)

    def search_forbidden(self, road_arcs: np.ndarray | None) -> np.ndarray | None:
        """The search graph's arcs a request forbidding `road_arcs` may not take (the turns onto them on an
        edge-based graph, the arcs themselves otherwise)."""
        if road_arcs is None or self.edges is None:
            return road_arcs
        return self.edges.forbidden(road_arcs)

    def check_outside(self, phantoms: Sequence[Phantom], forbidden: np.ndarray) -> None:
        """`InvalidValue` naming the first waypoint snapped onto a road inside an area to avoid."""
        bad = set(np.asarray(forbidden).tolist())
        for i, p in enumerate(phantoms):
            arcs = [a for a in (p.fwd_arc, p.bwd_arc) if a >= 0]
            if arcs and all(a in bad for a in arcs):
                raise InvalidValue(f"waypoint {i} is on a road inside an area to avoid")

    @property
    def roads(self) -> RoadGraph:
        """The road graph step building reads (names, modes, roundabouts, junction bearings), built on first use."""
        r = self.__dict__.get("_roads")
        if r is None:
            modes = {"car": "driving", "bike": "cycling", "bicycle": "cycling", "foot": "walking", "testbot": "driving"}
            mode = modes.get(str(self.graph.manifest.get("profile", "car")), "driving")
            r = self.__dict__["_roads"] = RoadGraph(self.graph, mode)
        return r

    def sample_points(self) -> tuple[tuple[float, float], tuple[float, float]] | None:
        """Two road points far apart in the largest component (example links, warm-up), in degrees; None when the
        graph has no node."""
        g = self.graph
        if g.num_nodes == 0:
            return None
        main = np.flatnonzero(np.asarray(g.node_component) == 0)
        lon = np.asarray(g.node_lon)[main] / COORD_SCALE
        lat = np.asarray(g.node_lat)[main] / COORD_SCALE
        a, b = int(np.argmin(lon + lat)), int(np.argmax(lon + lat))
        return (round(float(lon[a]), 5), round(float(lat[a]), 5)), (round(float(lon[b]), 5), round(float(lat[b]), 5))

    def node_lonlat(self, nodes: np.ndarray) -> np.ndarray:
        """float64 [k, 2] degrees of search nodes (traces, diagnostics): a road node, or on an edge-based graph the
        end of the search node's road arc."""
        g = self.search_graph
        idx = np.asarray(nodes, dtype=np.int64)
        return np.stack([g.node_lon[idx], g.node_lat[idx]], axis=1) / COORD_SCALE

    def arc_info(self, arc: int) -> ArcInfo:
        """Name, ref, road class and flags of an arc (for step building)."""
        g = self.graph
        code = int(g.arc_class[arc])
        return ArcInfo(
            name=g.string(int(g.arc_name[arc])),
            ref=g.string(int(g.arc_ref[arc])),
            road_class=ROAD_CLASSES[code] if code < len(ROAD_CLASSES) else "other",
            flags=int(g.arc_flags[arc]),
        )

    # -- snapping --------------------------------------------------------------------------------------------------

    def _radius(self, radius_m: float | None) -> float | None:
        if self.max_snap_m is None:
            return radius_m
        if radius_m is None:
            return self.max_snap_m
        return min(float(radius_m), self.max_snap_m) if not math.isnan(float(radius_m)) else radius_m

    def snap(
        self,
        lon: float,
        lat: float,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
    ) -> Phantom:
        """Snap one coordinate (degrees) to its nearest road segment within `radius_m` (capped by `max_snap_m`).

        `bearing` = (degrees 0..360, tolerance 0..180) keeps segments travelled that way; see `Snapper.snap`. For the
        waypoints of one request use `snap_waypoints`, which applies the tiny-component rule across them.
        """
        return self.snapper.snap(lon, lat, self._radius(radius_m), bearing, exclude_mask)

    def candidates(
        self,
        lon: float,
        lat: float,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
    ) -> Candidates:
        """A coordinate's nearest segment and nearest big-component segment (`app.engine.snap.Candidates`)."""
        return self.snapper.candidates(lon, lat, self._radius(radius_m), bearing, exclude_mask)

    def snap_waypoints(
        self,
        points: Sequence[tuple[float, float]],
        radiuses: Sequence[float | None] | None = None,
        bearings: Sequence[tuple[float, float] | None] | None = None,
        exclude_mask: int = 0,
        approaches: Sequence[str | None] | None = None,
    ) -> list[Phantom]:
        """Snap the points of one request together (OSRM's rule, `app.engine.snap.choose`); roads of excluded
        classes (`exclude_mask`, `Router.exclude_set`) are no candidates. `approaches` (OSRM's `curb`, `opposite`,
        `unrestricted` per point) keep the direction of travel that has the point on its right (curb) or left side.

        `NoSegment` names the first point that found no road within its radius (and how far the nearest road is).
        """
        cands = []
        for i, (lon, lat) in enumerate(points):
            radius = radiuses[i] if radiuses is not None else None
            bearing = bearings[i] if bearings is not None else None
            try:
                cands.append(self.candidates(lon, lat, radius, bearing, exclude_mask))
            except NoSegment as exc:
                err = NoSegment(f"waypoint {i}: {exc.message}")
                err.index = i
                raise err from None
        phantoms = choose(cands)
        if approaches is not None:
            phantoms = [approach(self, p, a) for p, a in zip(phantoms, approaches, strict=False)] + phantoms[
                len(approaches) :
            ]
        return phantoms

    def nearest(
        self,
        lon: float,
        lat: float,
        number: int = 1,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
    ) -> list[Phantom]:
        """Up to `number` phantoms on distinct chains, nearest first."""
        return self.snapper.nearest(lon, lat, number, self._radius(radius_m), bearing, exclude_mask)

    # -- queries ---------------------------------------------------------------------------------------------------

    def query(self) -> Query:
        """This thread's query object (created on first use, then reused)."""
        q = getattr(self._local, "query", None)
        if q is None:
            q = Query(self)
            self._local.query = q
        return q

    def route(self, phantoms: Sequence[Phantom], algorithm: str = "ch") -> Route:
        """Shorthand for `self.query().route(...)`."""
        return self.query().route(phantoms, algorithm)

    def table(self, sources: Sequence[Phantom], destinations: Sequence[Phantom], exclude: Iterable[str] = ()) -> Table:
        """Shorthand for `self.query().table(...)`."""
        return self.query().table(sources, destinations, exclude)

    def warmup(self, algorithms: Sequence[str] | None = None) -> None:
        """Run a few tiny queries per algorithm (all available, or `algorithms`) and a table, so numba compiles or
        loads their kernels before the first request."""
        g = self.graph
        arcs = np.flatnonzero(self.snapper.big_chain[np.asarray(g.arc_geom) >> 1])
        if len(arcs) == 0:
            return
        a, b = int(arcs[0]), int(arcs[-1])
        ends = [
            (g.node_lon[g.arc_tail[a]], g.node_lat[g.arc_tail[a]]),
            (g.node_lon[g.arc_head[b]], g.node_lat[g.arc_head[b]]),
        ]
        phs = [self.snap(float(x) / COORD_SCALE, float(y) / COORD_SCALE) for x, y in ends]
        # a point mid-chain too, so partial pieces are exercised
        gf = g.geom_first
        c = int(g.arc_geom[a]) >> 1
        mid = (int(gf[c]) + int(gf[c + 1]) - 1) // 2
        phs.append(self.snap(float(g.geom_lon[mid]) / COORD_SCALE + 1e-6, float(g.geom_lat[mid]) / COORD_SCALE))
        q = self.query()
        for name in self.algorithms if algorithms is None else algorithms:
            for x, y in ((0, 1), (1, 0), (2, 1), (0, 2)):
                try:
                    q.route([phs[x], phs[y]], name)
                except NoRoute:
                    pass
        q.table(phs, phs)


# -- seeds -----------------------------------------------------------------------------------------------------------


@kernel
def _seeds(as_source, fwd, bwd, w_f, d_f, w_b, d_b, arc_head, arc_tail, at_node, at_kind):  # pragma: no cover - numba
    """(nodes, weights, dists, kinds) of a phantom's seeds, one per node (the cheapest, then the shortest); a phantom
    on road node `at_node` (>= 0, `at_chain_end`) also seeds that node at 0 with kind `at_kind`."""
    nodes = np.empty(3, dtype=np.int32)
    ws = np.empty(3, dtype=np.int64)
    ds = np.empty(3, dtype=np.int64)
    kinds = np.empty(3, dtype=np.int64)
    k = 0
    if fwd >= 0:
        nodes[k] = arc_head[fwd] if as_source else arc_tail[fwd]
        ws[k], ds[k], kinds[k] = w_f, d_f, 0
        k += 1
    if bwd >= 0:
        nodes[k] = arc_head[bwd] if as_source else arc_tail[bwd]
        ws[k], ds[k], kinds[k] = w_b, d_b, 1
        k += 1
    if at_node >= 0:  # exactly on a chain end node: that node, at no cost
        nodes[k], ws[k], ds[k], kinds[k] = at_node, 0, 0, at_kind
        k += 1
    keep = np.ones(k, dtype=np.bool_)
    for a in range(k):
        for b in range(k):
            if a != b and nodes[a] == nodes[b]:
                if ws[b] < ws[a] or (ws[b] == ws[a] and (ds[b] < ds[a] or (ds[b] == ds[a] and b < a))):
                    keep[a] = False
    sel = np.flatnonzero(keep)
    return nodes[sel], ws[sel], ds[sel], kinds[sel]


def make_seeds(router: Router, ph: Phantom, as_source: bool) -> tuple[Seeds, np.ndarray]:
    """Seeds of a phantom as a search source or target, and the kind (FWD/BWD/AT_FIRST/AT_LAST) of each seed.

    On an edge-based graph the seeds are search nodes (`app.engine.edges`): see `seeds_with_turns`.

    Source: head(fwd_arc) at fwd_weight_after, head(bwd_arc) at bwd_weight_after. Target: tail(fwd_arc) at
    fwd_weight_before, tail(bwd_arc) at bwd_weight_before. A phantom exactly on a chain end node also seeds that node
    at 0, unless a bearing filter restricted its directions. One seed per node (the cheapest).
    """
    if router.edges is not None:
        seeds, kinds, _ = seeds_with_turns(router, ph, as_source)
        return seeds, kinds
    g = router.graph
    if as_source:
        w_f, d_f, w_b, d_b = ph.fwd_weight_after, ph.fwd_dist_after, ph.bwd_weight_after, ph.bwd_dist_after
    else:
        w_f, d_f, w_b, d_b = ph.fwd_weight_before, ph.fwd_dist_before, ph.bwd_weight_before, ph.bwd_dist_before
    at, at_kind = at_chain_end(router, ph)
    nodes, ws, ds, kinds = _seeds(
        as_source, ph.fwd_arc, ph.bwd_arc, w_f, d_f, w_b, d_b, g.arc_head, g.arc_tail, at, at_kind
    )
    fb, fa, bb, ba = ph.times()
    t_f, t_b = (fa, ba) if as_source else (fb, bb)
    times = np.where(kinds == FWD, t_f, np.where(kinds == BWD, t_b, 0)).astype(np.int64)
    return Seeds(nodes, ws, ds, ph.lon, ph.lat, times), kinds


def approach(router: Router, ph: Phantom, side: str | None) -> Phantom:
    """The phantom travelled only in the direction that passes its input point on the right (`curb`, right-hand
    traffic) or on the left (`opposite`); unchanged for `unrestricted`, a point on the road itself, or when the
    other direction is the only one (a oneway)."""
    if side not in ("curb", "opposite") or ph.fwd_arc < 0 or ph.bwd_arc < 0:
        return ph
    g = router.graph
    i = int(router.assembler._gf[ph.chain]) + ph.segment
    k = math.cos(math.radians(ph.lat))
    dx = (float(g.geom_lon[i + 1]) - float(g.geom_lon[i])) / COORD_SCALE * k
    dy = (float(g.geom_lat[i + 1]) - float(g.geom_lat[i])) / COORD_SCALE
    vx, vy = (ph.input_lon - ph.lon) * k, ph.input_lat - ph.lat
    cross = dx * vy - dy * vx  # < 0: the input point lies right of the chain's (fwd) direction
    if abs(cross) < 1e-14 or ph.distance_m < 0.01:
        return ph
    keep_fwd = (cross < 0) == (side == "curb")
    timed = ph.fwd_time_before is not None
    if keep_fwd:
        return replace(ph, bwd_arc=-1, bwd_weight_before=0, bwd_weight_after=0, bwd_dist_before=0, bwd_dist_after=0,
                       bwd_time_before=0 if timed else None, bwd_time_after=0 if timed else None)  # fmt: skip
    return replace(ph, fwd_arc=-1, fwd_weight_before=0, fwd_weight_after=0, fwd_dist_before=0, fwd_dist_after=0,
                   fwd_time_before=0 if timed else None, fwd_time_after=0 if timed else None)  # fmt: skip


def _only(
    seeds: Seeds, kinds: np.ndarray, turns: np.ndarray | None, direction: int | None
) -> tuple[Seeds, np.ndarray, np.ndarray | None]:
    """The seeds of one direction (FWD/BWD) plus those on a junction node; all of them for None."""
    if direction is None:
        return seeds, kinds, turns
    keep = (kinds == direction) | (kinds == AT_FIRST) | (kinds == AT_LAST)
    times = None if seeds.durations is None else seeds.durations[keep]
    sub = Seeds(seeds.nodes[keep], seeds.weights[keep], seeds.dists[keep], seeds.lon, seeds.lat, times)
    return sub, kinds[keep], (turns[keep] if turns is not None else None)


def at_chain_end(router: Router, ph: Phantom) -> tuple[int, int]:
    """(road node, AT_FIRST/AT_LAST) when the phantom sits exactly on its chain's first or last node and no bearing
    restricted its directions; (-1, 0) otherwise."""
    g, ch = router.graph, router.chains
    if not (ph.fwd_arc == ch.fwd_arc[ph.chain] and ph.bwd_arc == ch.bwd_arc[ph.chain]):
        return -1, 0
    gf = router.assembler._gf
    p0, p1 = int(gf[ph.chain]), int(gf[ph.chain + 1]) - 1
    if ph.lon == g.geom_lon[p0] / COORD_SCALE and ph.lat == g.geom_lat[p0] / COORD_SCALE:
        return int(ch.first_node[ph.chain]), AT_FIRST
    if ph.lon == g.geom_lon[p1] / COORD_SCALE and ph.lat == g.geom_lat[p1] / COORD_SCALE:
        return int(ch.last_node[ph.chain]), AT_LAST
    return -1, 0


def seeds_with_turns(router: Router, ph: Phantom, as_source: bool) -> tuple[Seeds, np.ndarray, np.ndarray]:
    """`make_seeds` plus the turn inside each seed's figures, int64 [k, 2] (weight, travel time; zeros on a
    node-based graph)."""
    if router.edges is not None:
        at, kind = at_chain_end(router, ph)
        return router.edges.seeds(ph, as_source, at, kind)
    seeds, kinds = make_seeds(router, ph, as_source)
    return seeds, kinds, np.zeros((len(kinds), 2), dtype=np.int64)


def _length_m(coords: np.ndarray) -> float:
    return (
        float(haversine_m(coords[:-1, 0], coords[:-1, 1], coords[1:, 0], coords[1:, 1]).sum())
        if len(coords) > 1
        else 0.0
    )


def direct(router: Router, src: Phantom, tgt: Phantom) -> tuple[int, int, int, int] | None:
    """(weight, dist, FWD|BWD, travel time) of the best stretch along the chain both phantoms share, or None."""
    if src.chain != tgt.chain:
        return None
    os_, ot = router.snapper.offset_m(src), router.snapper.offset_m(tgt)
    sfb, _, sbb, _ = src.times()
    tfb, _, tbb, _ = tgt.times()
    best = None
    if src.fwd_arc >= 0 and tgt.fwd_arc >= 0 and ot >= os_:
        best = (tgt.fwd_weight_before - src.fwd_weight_before, tgt.fwd_dist_before - src.fwd_dist_before, FWD,
                tfb - sfb)  # fmt: skip
    if src.bwd_arc >= 0 and tgt.bwd_arc >= 0 and ot <= os_:
        b = (tgt.bwd_weight_before - src.bwd_weight_before, tgt.bwd_dist_before - src.bwd_dist_before, BWD, tbb - sbb)
        if best is None or b[0] < best[0]:
            best = b
    if best is None:
        return None
    return max(best[0], 0), max(best[1], 0), best[2], max(best[3], 0)


# -- the per-thread query --------------------------------------------------------------------------------------------


class Query:
    """One thread's search state: search objects per algorithm, created on first use and reused."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self._searches: dict[tuple[str, str | None], Search] = {}
        self._tables: dict[str, Any] = {}
        self._searcher: Searcher | None = None
        self._dist_searcher: Searcher | None = None

    @property
    def searcher(self) -> Searcher:
        """This thread's arrays for the core searches (shared by every core algorithm and the table fallback)."""
        if self._searcher is None:
            self._searcher = Searcher(self.router.search_graph)
        return self._searcher

    def _search(self, algorithm: str, exclude: ExcludeSet | None = None) -> Search:
        """This thread's search object for `algorithm` (on the hierarchy without `exclude` for CH)."""
        prefix = "ch_" if exclude is None else exclude.prefix
        key = (algorithm, prefix)
        s = self._searches.get(key)
        if s is None:
            f = self.router.factory(algorithm)
            if not isinstance(f, Algorithm):
                s = f(self.router.search_graph)
            elif f.engine == "ch":
                if prefix is None:
                    raise InvalidValue("this graph has no hierarchy without the excluded classes: use algorithm alt")
                s = CHSearch(self.router.search_graph, prefix)
            else:
                s = CoreSearch(self.router.search_graph, f, searcher=self.searcher)
            self._searches[key] = s
        return s

    def route(self, phantoms: Sequence[Phantom], algorithm: str = "ch", options: RouteOptions | None = None) -> Route:
        """The route through `phantoms` in order (one leg per consecutive pair); `NoRoute` when a leg is impossible.

        `options` (`app.engine.types.RouteOptions`): excluded classes, forbidden arcs, epsilon, trace; its algorithm
        field is not used here (`algorithm` is).
        """
        return self.routes(phantoms, RouteOptions() if options is None else options, algorithm).best

    def routes(self, phantoms: Sequence[Phantom], options: RouteOptions, algorithm: str | None = None) -> RouteResult:
        """The best route through `phantoms` with `options`, its search traces when asked."""
        if len(phantoms) < 2:
            raise InvalidValue(f"a route needs at least 2 waypoints, got {len(phantoms)}")
        algorithm = algorithm or options.algorithm
        spec = self.router.factory(algorithm)
        exclude = self.router.exclude_set(options.exclude)
        core_opts = None
        if isinstance(spec, Algorithm):
            if options.epsilon != 1.0 and not spec.epsilon:
                raise InvalidValue(f"epsilon applies to astar and bidirectional-astar, not {algorithm}")
            if options.forbidden is not None and spec.engine == "ch":
                raise InvalidValue("areas to avoid need a search that filters arcs: use algorithm alt")
            if spec.engine == "core" and (exclude or options.forbidden is not None or options.trace
                                          or options.epsilon != 1.0):  # fmt: skip
                core_opts = SearchOptions(
                    exclude_flags=exclude.mask if exclude else 0,
                    forbidden=self.router.search_forbidden(options.forbidden),
                    epsilon=options.epsilon,
                    trace=options.trace,
                    trace_limit=options.trace_limit,
                )
        search = self._search(algorithm, exclude)
        if isinstance(spec, Algorithm) and spec.engine == "ch":
            search.trace = options.trace  # type: ignore[attr-defined]
            search.trace_limit = options.trace_limit  # type: ignore[attr-defined]
        straight = options.continue_straight
        if straight is None:
            straight = bool(self.router.graph.manifest.get("continue_straight", False))
        if straight and self.router.edges is not None and len(phantoms) > 2:
            legs, traces = self._straight_legs(search, algorithm, phantoms, core_opts)
        else:
            legs, traces = [], []
            for i in range(len(phantoms) - 1):
                leg, trace, _ = self._leg(search, algorithm, i, phantoms[i], phantoms[i + 1], core_opts)
                legs.append(leg)
                if trace is not None:
                    traces.append(trace)
        best = join_route(legs, algorithm)
        routes = [best]
        if options.alternatives > 0 and len(phantoms) == 2 and direct(self.router, *phantoms) is None:
            mask = exclude.mask if exclude else 0
            routes += self._alternatives(phantoms[0], phantoms[1], best, options.alternatives, mask, options.forbidden)
        return RouteResult(routes, traces, options.epsilon)

    def _alternatives(
        self, src: Phantom, tgt: Phantom, best: Route, want: int, exclude_mask: int, forbidden: np.ndarray | None
    ) -> list[Route]:
        """Up to `want` alternatives to `best` between two phantoms (`app.engine.alternatives`: plateaus)."""
        r = self.router
        g, sg = r.graph, r.search_graph
        s_seeds, s_kinds = make_seeds(r, src, True)
        t_seeds, t_kinds, t_turns = seeds_with_turns(r, tgt, False)
        cutoff = int(alternatives.MAX_STRETCH * best.weight) + 1
        opts = SearchOptions(exclude_flags=exclude_mask, forbidden=r.search_forbidden(forbidden), cutoff=cutoff)
        sr = self.searcher
        dist_f, pred_f, done_f = sr.bounded_tree(s_seeds, t_seeds, True, opts)
        dist_b, pred_b, done_b = sr.bounded_tree(t_seeds, s_seeds, False, opts)
        rows = alternatives.plateaus(
            dist_f, pred_f, done_f, dist_b, pred_b, done_b, sg.arc_tail, sg.arc_head, sg.arc_weight, cutoff
        )
        best_arcs = np.concatenate([leg.piece_arc for leg in best.legs])
        turns_of: dict[bytes, np.ndarray] = {}

        def path(first: int, last: int) -> tuple[np.ndarray, int, int]:
            """The plateau's route as road arcs (the turns onto them kept for the leg)."""
            arcs, s_seed, t_seed = alternatives.via_path(first, last, pred_f, pred_b, sg.arc_tail, sg.arc_head)
            if r.edges is not None:
                arcs, turns = r.edges.road_path(arcs)
                if s_kinds[s_seed] in (AT_FIRST, AT_LAST):
                    arcs, turns = r.edges.with_first(int(s_seeds.nodes[s_seed]), arcs, turns)
                turns_of[arcs.tobytes()] = turns
            return arcs, s_seed, t_seed

        out = []
        for arcs, s_seed, t_seed, total in alternatives.choose(
            rows, best.weight, want, path, best_arcs, g.arc_weight, g.arc_tail
        ):
            stats = SearchStats("alternatives")
            turns = turns_of.get(np.asarray(arcs, dtype=np.int32).tobytes())
            leg = r.assembler.search_leg(
                src, int(s_kinds[s_seed]), arcs, tgt, int(t_kinds[t_seed]), stats, turns, tuple(t_turns[t_seed])
            )
            assert leg.weight == total, f"alternative weighs {leg.weight} ds, its plateau said {total}"
            out.append(join_route([leg], best.algorithm))
        return out

    def _straight_legs(
        self, search: Search, algorithm: str, phantoms: Sequence[Phantom], opts: SearchOptions | None
    ) -> tuple[list[Leg], list[SearchTrace]]:
        """Legs through via points without turning back there (OSRM's `continue_straight`): a leg leaves a via point
        in the direction the previous one arrived (FWD or BWD along its road). Dynamic programming over the arrival
        direction at each via point, one search per (leaving, arriving) direction pair; a via point on a junction
        node, or on a oneway, constrains nothing more than its road does."""
        k = len(phantoms)
        # best[d] = (total weight, legs, traces) arriving at the current phantom in direction d (None: any)
        best: dict[int | None, tuple[int, list[Leg], list[SearchTrace]]] = {None: (0, [], [])}
        for i in range(k - 1):
            last = i == k - 2
            nxt: dict[int | None, tuple[int, list[Leg], list[SearchTrace]]] = {}
            for d_in, (w0, legs0, tr0) in best.items():
                for d_out in (None,) if last else (FWD, BWD):
                    try:
                        leg, trace, arrive = self._leg(search, algorithm, i, phantoms[i], phantoms[i + 1], opts,
                                                       s_dir=d_in, t_dir=d_out)  # fmt: skip
                    except NoRoute:
                        continue
                    key = None if last else arrive
                    total = w0 + leg.weight
                    if key not in nxt or total < nxt[key][0]:
                        nxt[key] = (total, [*legs0, leg], [*tr0, *([trace] if trace is not None else [])])
            if not nxt:
                raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1} without turning back at a via point")
            best = nxt
        _, legs, traces = min(best.values(), key=lambda v: v[0])
        return legs, traces

    def _leg(
        self,
        search: Search,
        algorithm: str,
        i: int,
        src: Phantom,
        tgt: Phantom,
        opts: SearchOptions | None = None,
        s_dir: int | None = None,
        t_dir: int | None = None,
    ) -> tuple[Leg, SearchTrace | None, int | None]:
        """One leg (and its trace); `s_dir`/`t_dir` (FWD/BWD) keep only the seeds leaving / arriving that way along
        the phantoms' roads (seeds on a junction node always stay); with the direction the leg arrives in (FWD/BWD,
        None on a junction node)."""
        r = self.router
        dr = direct(r, src, tgt)
        s_seeds, s_kinds = make_seeds(r, src, True)
        t_seeds, t_kinds, t_turns = seeds_with_turns(r, tgt, False)
        if s_dir is not None or t_dir is not None:
            s_seeds, s_kinds, _ = _only(s_seeds, s_kinds, None, s_dir)
            t_seeds, t_kinds, t_turns = _only(t_seeds, t_kinds, t_turns, t_dir)
            if dr is not None and ((s_dir is not None and dr[2] != s_dir) or (t_dir is not None and dr[2] != t_dir)):
                dr = None
            if len(s_seeds.nodes) == 0 or len(t_seeds.nodes) == 0:
                raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1}")
        # no path through the network can beat the direct stretch when its weight is below the cheapest seeds
        lower = min(s_seeds.weights.tolist(), default=INF) + min(t_seeds.weights.tolist(), default=INF)
        if dr is not None and dr[0] <= lower:
            leg = r.assembler.direct_leg(src, tgt, dr[2], SearchStats(algorithm))
            return leg, None, dr[2]
        res = search.run(s_seeds, t_seeds) if opts is None else search.run(s_seeds, t_seeds, opts)  # type: ignore
        if dr is not None and (res.weight >= INF or dr[0] <= res.weight):
            leg = r.assembler.direct_leg(src, tgt, dr[2], res.stats)
            return leg, res.trace, dr[2]
        if res.weight >= INF:
            raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1}")
        arcs, turns = (res.arcs, None) if r.edges is None else r.edges.road_path(res.arcs)
        if r.edges is not None and s_kinds[res.source_seed] in (AT_FIRST, AT_LAST):  # started on the seed's arc
            arcs, turns = r.edges.with_first(int(s_seeds.nodes[res.source_seed]), arcs, turns)
        leg = r.assembler.search_leg(
            src, int(s_kinds[res.source_seed]), arcs, tgt, int(t_kinds[res.target_seed]), res.stats,
            turns, tuple(t_turns[res.target_seed]),
        )  # fmt: skip
        assert leg.weight == res.weight, f"{algorithm}: path weighs {leg.weight} ds, the search reported {res.weight}"
        kind = int(t_kinds[res.target_seed])
        return leg, res.trace, (kind if kind in (FWD, BWD) else None)

    def isochrone(
        self,
        phantom: Phantom,
        limits: Sequence[int],
        metric: str = "duration",
        reverse: bool = False,
        exclude: Iterable[str] = (),
    ) -> tuple[list[np.ndarray], int]:
        """The network reached from (or, with `reverse`, reaching) `phantom` within each limit (ds of travel time, or
        dm of distance with `metric` "distance"): per limit, float64 [k, 4] pieces (lon0, lat0, lon1, lat1); and the
        number of nodes the search settled. One search with the largest limit as its cutoff."""
        r = self.router
        ex = r.exclude_set(exclude)
        # travel time: the weight itself, or (routability) the durations on a searcher of their own
        timed = metric == "duration" and r.graph.manifest.get("weight_name", "duration") != "duration"
        seeds, _ = make_seeds(r, phantom, as_source=not reverse)
        if metric == "duration" and not timed:
            sr = self.searcher
        else:
            kind = "time" if timed else "distance"
            if self._dist_searcher is None or self._dist_searcher.metric != kind:
                self._dist_searcher = Searcher(r.search_graph, metric=kind)
            sr = self._dist_searcher
            cost = seeds.duration_array() if timed else seeds.dists
            seeds = Seeds(seeds.nodes, cost, seeds.dists, seeds.lon, seeds.lat)
        top = int(max(limits))
        opts = SearchOptions(exclude_flags=ex.mask if ex else 0, cutoff=top)
        q = sr.one_to_many(seeds, np.zeros(0, dtype=np.int32), forward=not reverse, options=opts)
        dist, settled = sr.settled(q)
        if metric == "duration":
            weight = r.graph.arc_duration if timed else r.graph.arc_weight
        else:
            weight = r.graph.arc_dist
        if r.edges is not None:  # per road arc: when the search reaches its start
            start, known = arc_starts(dist, sr.labelled(q), r.edges.node_arc, weight, not reverse)
            if not reverse:  # the source's own arcs: from the point on (`_own_chain`), not from their tails
                known[r.edges.node_arc[seeds.nodes]] = False
        own = self._own_chain(phantom, reverse, metric, ex.mask if ex else 0)
        out = []
        for limit in limits:
            if r.edges is None:
                parts = [reached_pieces(r.graph, dist, settled, int(limit), not reverse, weight)]
            else:
                parts = [reached_arc_pieces(r.graph, start, known, int(limit), not reverse, weight)]
            for coords, cost in own:
                share = 1.0 if cost <= 0 else min(1.0, limit / cost)
                parts.append(point_pieces(coords, share * _length_m(coords)))
            out.append(np.concatenate(parts))
        return out, int(sr.out[2])

    def _own_chain(self, ph: Phantom, reverse: bool, metric: str, exclude_mask: int) -> list[tuple[np.ndarray, int]]:
        """The snapped point's own chain as (polyline from the point, its cost in the metric) per usable direction:
        leaving the point (forward search) or arriving at it (reverse)."""
        g = self.router.graph
        gf = g.geom_first
        p0, p1 = int(gf[ph.chain]), int(gf[ph.chain + 1])
        chain = np.stack([g.geom_lon[p0:p1], g.geom_lat[p0:p1]], axis=1) / COORD_SCALE
        point = np.array([[ph.lon, ph.lat]])
        head = np.concatenate([point, chain[ph.segment + 1 :]])  # from the point towards the chain's last point
        tail = np.concatenate([point, chain[ph.segment :: -1]])  # from the point towards its first point
        dist = metric != "duration"
        fb, fa, bb, ba = ph.times()  # travel times (the weights where the weight is the travel time)
        out = []
        for arc, after, before, ahead, behind in (
            (ph.fwd_arc, ph.fwd_dist_after if dist else fa, ph.fwd_dist_before if dist else fb, head, tail),
            (ph.bwd_arc, ph.bwd_dist_after if dist else ba, ph.bwd_dist_before if dist else bb, tail, head),
        ):  # fmt: skip
            if arc < 0 or (int(g.arc_flags[arc]) & exclude_mask):
                continue
            out.append((behind, before) if reverse else (ahead, after))
        return out

    def table(self, sources: Sequence[Phantom], destinations: Sequence[Phantom], exclude: Iterable[str] = ()) -> Table:
        """Durations (s) and distances (m) for every source x destination; NaN where unreachable.

        Uses the CH bucket table when the graph has a CH (the hierarchy without the `exclude` classes), else one
        Dijkstra per source over all destination seeds.
        """
        r = self.router
        ex = r.exclude_set(exclude)
        src = [make_seeds(r, p, True)[0] for p in sources]
        dst = [make_seeds(r, p, False)[0] for p in destinations]
        S, T = len(src), len(dst)
        prefix = "ch_" if ex is None else ex.prefix
        if S == 0 or T == 0:
            w = np.zeros((S, T), dtype=np.int64)
            d = np.zeros((S, T), dtype=np.int64)
            t = np.zeros((S, T), dtype=np.int64)
        elif r._table_factory is not None and prefix is not None:
            table = self._tables.get(prefix)
            if table is None:
                table = self._tables[prefix] = r._table_factory(r.search_graph, prefix)
            w, d, t = (np.array(x, dtype=np.int64) for x in table.run_with_durations(src, dst))
        else:
            w, d, t = self._m2m_table(src, dst, ex.mask if ex else 0)
        # pairs on one chain: the direct stretch may beat any path through the network
        by_chain: dict[int, list[int]] = {}
        for j, p in enumerate(destinations):
            by_chain.setdefault(p.chain, []).append(j)
        for i, p in enumerate(sources):
            for j in by_chain.get(p.chain, ()):
                dr = direct(r, p, destinations[j])
                if dr is not None and dr[0] <= w[i, j]:
                    w[i, j], d[i, j], t[i, j] = dr[0], dr[1], dr[3]
        unreachable = w >= INF
        durations = np.where(unreachable, np.nan, t / WEIGHT_PER_SECOND)
        distances = np.where(unreachable, np.nan, d / DIST_PER_METRE)
        return Table(durations, distances, list(sources), list(destinations))

    def _m2m_table(
        self, src: list[Seeds], dst: list[Seeds], exclude_mask: int = 0
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One core one-to-many search per source, until every destination seed node is settled: (weights, dists,
        durations of the same paths)."""
        g = self.router.search_graph
        owner = np.concatenate([np.full(len(s.nodes), j) for j, s in enumerate(dst)])
        nodes = np.ascontiguousarray(np.concatenate([s.nodes for s in dst]), dtype=np.int32)
        tw = np.concatenate([s.weights for s in dst])
        td = np.concatenate([s.dists for s in dst])
        tt = np.concatenate([s.duration_array() for s in dst])
        T = len(dst)
        w = np.full((len(src), T), INF, dtype=np.int64)
        d = np.full((len(src), T), INF, dtype=np.int64)
        t = np.full((len(src), T), INF, dtype=np.int64)
        sr = self.searcher
        opts = SearchOptions(exclude_flags=exclude_mask) if exclude_mask else None
        for i, s in enumerate(src):
            q = sr.one_to_many(s, nodes, options=opts)
            ow = sr.settled_weights(q)[nodes]
            ok = ow < INF
            od = np.zeros(len(nodes), dtype=np.int64)
            ot = np.zeros(len(nodes), dtype=np.int64)
            reached = np.ascontiguousarray(nodes[ok])
            if len(reached):
                part = np.empty(len(reached), dtype=np.int64)
                path_dists(sr.lab.pred, g.arc_tail, g.arc_dist, reached, np.asarray(s.dists, dtype=np.int64), part)
                od[ok] = part
                path_dists(sr.lab.pred, g.arc_tail, g.arc_duration, reached, s.duration_array(), part)
                ot[ok] = part
            tot_w = np.where(ok, ow + tw, INF)
            tot_d = np.where(ok, od + td, INF)
            tot_t = np.where(ok, ot + tt, INF)
            # per destination: the cheapest of its seeds (ties: the shorter)
            order = np.lexsort((tot_d, tot_w, owner))
            first = np.unique(owner[order], return_index=True)[1]
            w[i] = tot_w[order][first]
            d[i] = tot_d[order][first]
            t[i] = tot_t[order][first]
        return w, d, t
